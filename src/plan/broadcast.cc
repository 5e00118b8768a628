#include "plan/broadcast.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string>

namespace shoal {

StatusOr<BroadcastSettings> NamedBroadcast(const std::string& name) {
  BroadcastSettings b;
  if (name == "scatter") {
    b.fanout = kMaxBroadcastFanout;
    b.scatter = true;
    b.chunk_bytes = kDefaultScatterChunkBytes;
  } else if (name == "tree") {
    b.fanout = kDefaultBroadcastFanout;
  } else if (name == "chain") {
    b.fanout = 1;
  } else if (name == "direct") {
    b.fanout = 0;
  } else {
    return InvalidArgument("unknown broadcast '" + name +
                           "' (scatter, tree, chain or direct)");
  }
  return b;
}

std::string BroadcastName(const BroadcastSettings& b) {
  if (b.fanout <= 0) return "direct";
  if (b.scatter) return "scatter";
  if (b.fanout == 1) return "chain";
  if (b.fanout == kDefaultBroadcastFanout) return "tree";
  return "trees of fan-out " + std::to_string(b.fanout);
}

bool SameSource(const Transfer& a, const Transfer& b) {
  return a.src.task == b.src.task && a.src.tensor == b.src.tensor &&
         a.src.region == b.src.region;
}

namespace {

// Orders transfers by their source endpoint, so that SameSource ones are
// equivalent.
struct SourceLess {
  bool operator()(const Transfer* a, const Transfer* b) const {
    if (a->src.task != b->src.task) return a->src.task < b->src.task;
    if (int c = a->src.tensor.compare(b->src.tensor); c != 0) return c < 0;
    if (a->src.region.begin != b->src.region.begin) {
      return a->src.region.begin < b->src.region.begin;
    }
    return a->src.region.end < b->src.region.end;
  }
};

}  // namespace

std::vector<std::vector<int>> BroadcastGroups(const Plan& p,
                                              const std::vector<int>& out,
                                              int self, int64_t seq) {
  std::vector<std::vector<int>> groups;
  if (p.broadcast.fanout <= 0) return groups;
  // One candidate per source endpoint, in the order of its first transfer
  // in `out`, found through a map: a task that sends a thousand slices (the
  // input of a layer split a thousand ways) would otherwise compare every
  // pair, every request.
  std::map<const Transfer*, size_t, SourceLess> index;
  std::vector<std::vector<int>> members;
  for (int xi : out) {
    const Transfer& b = p.transfers[xi];
    auto [it, added] = index.emplace(&b, members.size());
    if (added) members.emplace_back();
    if (b.dst.task < 0 || p.DeviceOf(b.dst.task, seq) == self) continue;
    members[it->second].push_back(xi);
  }
  for (auto& group : members) {
    if (static_cast<int>(group.size()) < kMinBroadcastDevices) continue;
    std::vector<int> devices;
    devices.reserve(group.size());
    for (int xi : group)
      devices.push_back(p.DeviceOf(p.transfers[xi].dst.task, seq));
    std::sort(devices.begin(), devices.end());
    const auto distinct =
        std::unique(devices.begin(), devices.end()) - devices.begin();
    if (distinct < kMinBroadcastDevices) continue;
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<RelayHop> RelayHops(const Plan& p,
                                const std::vector<int>& transfers, int self,
                                int64_t seq, int fanout) {
  std::vector<int> devices;
  std::map<int, std::vector<int>> into;
  for (int xi : transfers) {
    const int d = p.DeviceOf(p.transfers[xi].dst.task, seq);
    if (d == self) continue;
    if (!into.count(d)) devices.push_back(d);
    into[d].push_back(xi);
  }
  // Receivers in device order starting after `self` and wrapping round, so
  // that when every device broadcasts a slice (the all-gather before a
  // layer split by outputs) each one heads runs for different sources;
  // in plan order device 0 would relay for every source and its uplink
  // carry most of the all-gather.
  const int n = static_cast<int>(p.devices.size());
  if (n > 0 && self >= 0) {
    std::stable_sort(devices.begin(), devices.end(), [&](int a, int b) {
      return ((a - self) % n + n) % n < ((b - self) % n + n) % n;
    });
  }
  std::vector<RelayHop> hops;
  const int m = static_cast<int>(devices.size());
  const int k = std::min(std::max(fanout, 1), m);
  int at = 0;
  for (int run = 0; run < k; ++run) {
    const int len = m / k + (run < m % k ? 1 : 0);
    RelayHop h;
    h.device = devices[at];
    h.deliver = into[h.device];
    for (int i = at + 1; i < at + len; ++i) {
      const auto& xs = into[devices[i]];
      h.relay.insert(h.relay.end(), xs.begin(), xs.end());
    }
    hops.push_back(std::move(h));
    at += len;
  }
  return hops;
}

std::vector<RelayHop> SourceHops(const Plan& p,
                                 const std::vector<int>& transfers, int self,
                                 int64_t seq) {
  if (!p.broadcast.scatter) {
    return RelayHops(p, transfers, self, seq, p.broadcast.fanout);
  }
  // Fan-out "all": one run per device, the order RelayHops gives them.
  std::vector<RelayHop> hops =
      RelayHops(p, transfers, self, seq, std::numeric_limits<int>::max());
  for (size_t i = 0; i < hops.size(); ++i) {
    for (size_t j = 0; j < hops.size(); ++j) {
      if (j == i) continue;
      hops[i].relay.insert(hops[i].relay.end(), hops[j].deliver.begin(),
                           hops[j].deliver.end());
    }
  }
  return hops;
}

bool ChunkGoesTo(const Plan& p, int64_t chunk, int hop, int hops) {
  return !p.broadcast.scatter || hops <= 0 || chunk % hops == hop;
}

int64_t ChunkShareBytes(int64_t total, int64_t chunk_bytes, int part,
                        int parts) {
  if (parts <= 1 || chunk_bytes <= 0) return total;
  const int64_t chunks = (total + chunk_bytes - 1) / chunk_bytes;
  if (part >= chunks) return 0;
  // Chunks part, part + parts, ...: all full but perhaps the last chunk.
  const int64_t mine = (chunks - 1 - part) / parts + 1;
  int64_t bytes = mine * chunk_bytes;
  if ((chunks - 1) % parts == part) bytes -= chunks * chunk_bytes - total;
  return bytes;
}

int64_t WireHopBytes(const Plan& p, const WireHop& h) {
  return ChunkShareBytes(p.WireBytes(p.transfers[h.transfer]),
                         p.broadcast.chunk_bytes, h.part, h.parts);
}

std::vector<WireHop> WireHops(const Plan& p, int64_t request) {
  // The transfers out of each source task, in plan order.
  std::map<int, std::vector<int>> out;
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    out[p.transfers[i].src.task].push_back(static_cast<int>(i));
  }
  std::vector<WireHop> hops;
  // Relays below a source hop carry what it carries.
  std::function<void(int, const std::vector<int>&, int, int)> relay =
      [&](int from, const std::vector<int>& xs, int part, int parts) {
        for (const RelayHop& h :
             RelayHops(p, xs, from, request, p.broadcast.fanout)) {
          hops.push_back(
              WireHop{h.deliver.front(), from, h.device, part, parts});
          relay(h.device, h.relay, part, parts);
        }
      };
  auto walk = [&](int from, const std::vector<int>& xs) {
    const std::vector<RelayHop> first = SourceHops(p, xs, from, request);
    const int parts = p.broadcast.scatter ? static_cast<int>(first.size()) : 1;
    for (int i = 0; i < static_cast<int>(first.size()); ++i) {
      const RelayHop& h = first[i];
      const int part = parts > 1 ? i : 0;
      // A scattered hop that gets no chunk (a tensor of fewer chunks than
      // receivers; an empty one goes to the first hop) sends nothing, and
      // nothing is relayed for it.
      if (parts > 1 && i > 0 &&
          WireHopBytes(p, WireHop{h.deliver.front(), from, h.device, part,
                                  parts}) == 0) {
        continue;
      }
      hops.push_back(WireHop{h.deliver.front(), from, h.device, part, parts});
      relay(h.device, h.relay, part, parts);
    }
  };
  for (const auto& [task, xs] : out) {
    const int self = p.DeviceOf(task, request);
    std::vector<bool> grouped(p.transfers.size(), false);
    for (const auto& g : BroadcastGroups(p, xs, self, request)) {
      for (int xi : g) grouped[xi] = true;
      walk(self, g);
    }
    for (int xi : xs) {
      if (grouped[xi]) continue;
      const int to = p.DeviceOf(p.transfers[xi].dst.task, request);
      if (to != self) hops.push_back(WireHop{xi, self, to});
    }
  }
  return hops;
}

}  // namespace shoal
