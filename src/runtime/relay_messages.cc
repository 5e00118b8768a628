#include "runtime/relay_messages.h"

#include <algorithm>
#include <set>

namespace shoal {

rpc::TensorMessage Readdress(const rpc::TensorMessage& header,
                             const RelayHop& h) {
  rpc::TensorMessage m = header;
  m.set_transfer(h.deliver.front());
  m.clear_relay();
  for (size_t i = 1; i < h.deliver.size(); ++i) m.add_relay(h.deliver[i]);
  for (int r : h.relay) m.add_relay(r);
  return m;
}

std::vector<std::pair<int, rpc::TensorMessage>> ChunkedSends(
    const Plan& p, const rpc::TensorMessage& header,
    const std::vector<RelayHop>& hops, const std::string& bytes) {
  const int64_t chunk_bytes = p.broadcast.chunk_bytes;
  const int m = static_cast<int>(hops.size());
  std::vector<rpc::TensorMessage> heads;
  for (const RelayHop& h : hops) heads.push_back(Readdress(header, h));
  std::vector<std::pair<int, rpc::TensorMessage>> out;
  const int64_t total = static_cast<int64_t>(bytes.size());
  for (int64_t at = 0; at < total || (total == 0 && at == 0);
       at += chunk_bytes) {
    const int64_t n = std::min(chunk_bytes, total - at);
    for (int i = 0; i < m; ++i) {
      if (!ChunkGoesTo(p, at / chunk_bytes, i, m)) continue;
      rpc::TensorMessage msg = heads[i];
      msg.set_chunk_offset(at);
      msg.set_total_bytes(total);
      msg.set_data(bytes.substr(at, n));
      out.emplace_back(hops[i].device, std::move(msg));
    }
    if (total == 0) break;
  }
  return out;
}

Status SplitRelay(const Plan& p, int device, const rpc::TensorMessage& m,
                  std::vector<int>* local, std::vector<int>* onward) {
  if (m.relay().empty()) return Status::Ok();
  const int n = static_cast<int>(p.transfers.size());
  const Transfer& x = p.transfers[m.transfer()];
  if (p.broadcast.fanout <= 0 || m.relay_size() >= n) {
    return InvalidArgument("transfer " + std::to_string(m.transfer()) +
                           " comes with a relay list the plan does not have");
  }
  std::set<int> seen{m.transfer()};
  for (int r : m.relay()) {
    if (r < 0 || r >= n || !seen.insert(r).second ||
        p.transfers[r].dst.task < 0 || !SameSource(p.transfers[r], x)) {
      return InvalidArgument("transfer " + std::to_string(m.transfer()) +
                             " names transfer " + std::to_string(r) +
                             " to relay, which does not carry its bytes");
    }
    const int dev = p.DeviceOf(p.transfers[r].dst.task, m.seq());
    (dev == device ? local : onward)->push_back(r);
  }
  return Status::Ok();
}

}  // namespace shoal
