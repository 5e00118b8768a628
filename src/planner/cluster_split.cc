#include "planner/cluster_split.h"

#include <sstream>

#include "sim/latency_model.h"

namespace shoal {

StatusOr<ClusterSplitResult> SplitForCluster(const Graph& g, const Cluster& c,
                                             double target_ms,
                                             double fatten_pct,
                                             int64_t division_factor) {
  std::vector<SplitDevice> devices;
  for (const auto& d : c.devices) {
    devices.push_back(SplitDevice{d.name, d.speed, d.memory_bytes});
  }
  ClusterSplitOptions o;
  o.division_factor = division_factor;
  o.fatten_pct = fatten_pct;
  o.target_ms = target_ms;
  o.macs_per_second = kPi3MacsPerSecond;
  o.weight_bytes_per_second = kPi3WeightBytesPerSecond;
  return RunClusterSplitter(g, devices, o);
}

std::string ClusterSplitReason(const ClusterSplitResult& r) {
  const LcpSummary& s = r.split.summary;
  std::ostringstream o;
  o << s.branches << (s.shares.empty() ? " equal" : " unequal")
    << " branches sized by the Splitter for ";
  for (size_t k = 0; k < r.devices.size(); ++k) {
    if (k == 4 && r.devices.size() > 5) {
      o << ", ...";
      break;
    }
    o << (k ? ", " : "") << r.devices[k] << " (" << s.branch_memory[k] / 1048576
      << " MiB, " << static_cast<int64_t>(r.predicted_ms[k]) << " ms)";
  }
  o << "; widths sized so each branch takes about as long on its device (shoal "
       "lcp split --cluster "
       "shows each branch count tried)";
  return o.str();
}

}  // namespace shoal
