#include "sim/latency_model.h"

#include <algorithm>

#include "sim/systolic.h"

namespace shoal {

// A board's CPU per message sent or received (cluster/board.h), as its
// emulated worker holds each message for.
void LatencyModel::BoardMessageCosts(Device* dev) {
  dev->send_cpu_s = dev->recv_cpu_s = BoardMessageSeconds(dev->rates, 0);
  dev->send_cpu_per_byte_s = dev->recv_cpu_per_byte_s =
      BoardMessageSeconds(dev->rates, 1) - dev->send_cpu_s;
}

LatencyModel LatencyModel::FromCluster(const Cluster& c) {
  LatencyModel m;
  m.cluster_ = c;
  for (const auto& d : c.devices) {
    const double per_mac = 1.0 / (d.speed * kPi3MacsPerSecond);
    OpFit f;
    f.per_mac_s = per_mac;
    // Bytes stand in for elements touched by MAC-free layers.
    f.per_byte_s = per_mac * kMacsPerElement / kBytesPerElement;
    Device dev;
    dev.fits = {{"*", f}};
    dev.link = d.link;
    dev.quota = QuotaForCpu(d.QuotaCpu());
    dev.per_weight_byte_s = 1.0 / (d.speed * kPi3WeightBytesPerSecond);
    dev.accelerator = d.accelerator;
    if (d.OnBoardRates()) {
      dev.board = true;
      dev.rates = ScaleRates(d.board->rates, d.board_speed);
      BoardMessageCosts(&dev);
    }
    // An accelerator is modelled, not emulated under a CPU quota.
    if (d.accelerator.present) dev.quota = CpuQuota{};
    m.devices_.push_back(std::move(dev));
  }
  return m;
}

namespace {

// The table keeps a sample's paced times (sim/profile.h PacedSeconds): the
// simulator's QuotaClock adds the throttling a task really meets.
LayerSample PacedSample(const LayerSample& s, const CpuQuota& q) {
  LayerSample p = s;
  p.seconds = PacedSeconds(s, q);
  p.alone_seconds = PacedAloneSeconds(s, q);
  return p;
}

}  // namespace

StatusOr<LatencyModel> LatencyModel::FromProfile(const Cluster& c,
                                                 const Profile& p,
                                                 const std::string& model) {
  LatencyModel m;
  m.cluster_ = c;
  for (const auto& d : c.devices) {
    const DeviceProfile* dp = p.Find(d.name);
    if (dp == nullptr) {
      return InvalidArgument("profile has no measurements for device '" +
                             d.name +
                             "' of the cluster file; run shoal "
                             "profile on this cluster");
    }
    Device dev;
    dev.fits = dp->fits;
    dev.link = dp->link;
    dev.quota = dp->has_cpu_quota ? dp->cpu_quota : QuotaForCpu(d.QuotaCpu());
    // Compute runs under the worker's pace where it has one (the quota
    // above stays the cgroup's: what messages' CPU competes for).
    const CpuQuota compute =
        dp->has_cpu_quota || dp->cpu_pace > 0 ? ComputeQuota(*dp) : dev.quota;
    std::map<Key, std::pair<double, int>> sum;
    for (const auto& ls : dp->samples) {
      auto& [s, n] = sum[Key{ls.op, ls.macs, ls.bytes}];
      s += PacedSeconds(ls, compute);
      ++n;
      if (!model.empty() && ls.model == model) {
        dev.layers.Add(PacedSample(ls, compute));
      }
    }
    for (const auto& [k, sn] : sum) dev.measured[k] = sn.first / sn.second;
    dev.send_cpu_s = dp->send_cpu_s;
    dev.recv_cpu_s = dp->recv_cpu_s;
    dev.send_cpu_per_byte_s = dp->send_cpu_per_byte_s;
    dev.recv_cpu_per_byte_s = dp->recv_cpu_per_byte_s;
    dev.idle_cpu_per_s = dp->idle_cpu_per_s;
    if (!dev.fits.count("*")) {
      return InvalidArgument("profile of device '" + d.name +
                             "' has no overall fit ('*')");
    }
    dev.accelerator = d.accelerator;
    // An emulated board computes in its class's time, whatever the host
    // measured; the profile still gives its link and message costs.
    if (d.OnBoardRates()) {
      dev.board = true;
      dev.rates = ScaleRates(d.board->rates, d.board_speed);
      BoardMessageCosts(&dev);
    }
    m.devices_.push_back(std::move(dev));
  }
  return m;
}

NodeTimes LatencyModel::Times(int d, const NodeCost& cost) const {
  const Device& dev = devices_.at(d);
  if (dev.accelerator.present) {
    NodeTimes t;
    t.context_s = t.alone_s = SystolicNode(dev.accelerator, cost).seconds;
    return t;
  }
  if (dev.board) {
    NodeTimes t;
    t.context_s = t.alone_s = BoardNodeSeconds(dev.rates, cost);
    return t;
  }
  if (!dev.layers.empty()) {
    if (auto t = dev.layers.Find(cost)) return *t;
  }
  const int64_t bytes =
      cost.input_bytes() + cost.output_bytes() + cost.weight_bytes();
  NodeTimes t;
  auto m = dev.measured.find(Key{cost.op, cost.macs, bytes});
  if (m != dev.measured.end()) {
    t.context_s = t.alone_s = m->second;
    return t;
  }
  const auto& fits = dev.fits;
  auto it = fits.find(cost.op);
  const OpFit& f = it != fits.end() ? it->second : fits.at("*");
  t.context_s = t.alone_s =
      std::max(0.0, f.intercept_s + f.per_mac_s * double(cost.macs) +
                        f.per_byte_s * double(bytes) +
                        dev.per_weight_byte_s * double(cost.weight_bytes()));
  return t;
}

double LatencyModel::NodeSeconds(int d, const NodeCost& cost) const {
  const NodeTimes t = Times(d, cost);
  return t.whole ? t.context_s : t.alone_s;
}

double LatencyModel::FragmentSeconds(int d,
                                     const std::vector<NodeCost>& nodes) const {
  std::vector<NodeTimes> ts;
  ts.reserve(nodes.size());
  double s = 0;
  int first = -1, last = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ts.push_back(Times(d, nodes[i]));
    s += ts.back().context_s;
    // Fused activations and views take no step of their own in the model.
    if (ts.back().context_s > 0) {
      if (first < 0) first = static_cast<int>(i);
      last = static_cast<int>(i);
    }
  }
  if (first < 0) {  // nothing but such nodes: each runs as its own step
    s = 0;
    for (const auto& t : ts) s += t.alone_s;
    return s;
  }
  // What a node alone pays beyond its step in the model is the reorder of
  // its input and of its output; split it by their bytes.
  auto edge = [&](int i, bool input) {
    const NodeCost& c = nodes[i];
    const double extra = std::max(0.0, ts[i].alone_s - ts[i].context_s);
    const double in = double(c.input_bytes()), out = double(c.output_bytes());
    if (in + out <= 0) return 0.0;
    return extra * (input ? in : out) / (in + out);
  };
  return s + edge(first, true) + edge(last, false);
}

StatusOr<double> LatencyModel::GraphSeconds(int d, const Graph& g) const {
  std::vector<NodeCost> costs;
  costs.reserve(g.nodes.size());
  for (const auto& n : g.nodes) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, n));
    costs.push_back(std::move(c));
  }
  return FragmentSeconds(d, costs);
}

CpuQuota LatencyModel::QuotaLeft(int d) const {
  CpuQuota q = Quota(d);
  if (q.limited()) {
    q.quota_s =
        std::max(0.5 * q.quota_s, q.quota_s - IdleCpuPerSecond(d) * q.period_s);
  }
  return q;
}

double LatencyModel::TransferSeconds(int src, int dst, int64_t bytes) const {
  if (src == dst) return 0;
  const Link& l = devices_.at(src).link;
  double s = l.latency_s;
  if (l.bandwidth_bps > 0) s += double(bytes) * 8.0 / l.bandwidth_bps;
  return s;
}

bool LatencyModel::SameDevice(int a, int b) const {
  const Device& x = devices_.at(a);
  const Device& y = devices_.at(b);
  auto same_fit = [](const OpFit& f, const OpFit& g) {
    return f.intercept_s == g.intercept_s && f.per_mac_s == g.per_mac_s &&
           f.per_byte_s == g.per_byte_s;
  };
  if (x.fits.size() != y.fits.size()) return false;
  for (auto i = x.fits.begin(), j = y.fits.begin(); i != x.fits.end();
       ++i, ++j) {
    if (i->first != j->first || !same_fit(i->second, j->second)) return false;
  }
  return x.measured == y.measured && x.layers == y.layers &&
         x.accelerator == y.accelerator && x.board == y.board &&
         x.rates == y.rates && x.send_cpu_s == y.send_cpu_s &&
         x.recv_cpu_s == y.recv_cpu_s &&
         x.send_cpu_per_byte_s == y.send_cpu_per_byte_s &&
         x.recv_cpu_per_byte_s == y.recv_cpu_per_byte_s &&
         x.idle_cpu_per_s == y.idle_cpu_per_s &&
         x.per_weight_byte_s == y.per_weight_byte_s &&
         x.link.bandwidth_bps == y.link.bandwidth_bps &&
         x.link.latency_s == y.link.latency_s &&
         x.quota.quota_s == y.quota.quota_s &&
         x.quota.period_s == y.quota.period_s &&
         cluster_.devices.at(a).memory_bytes ==
             cluster_.devices.at(b).memory_bytes;
}

double LatencyModel::MacsPerSecond(int d) const {
  if (devices_.at(d).accelerator.present) {
    return devices_.at(d).accelerator.peak_macs_per_s();
  }
  if (devices_.at(d).board) return devices_.at(d).rates.gemm_macs_per_s;
  const auto& fits = devices_.at(d).fits;
  auto it = fits.find("Conv");
  const OpFit& f = it != fits.end() ? it->second : fits.at("*");
  return f.per_mac_s > 0 ? 1.0 / f.per_mac_s : kPi3MacsPerSecond;
}

}  // namespace shoal
