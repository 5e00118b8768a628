#include "cli/plan_common.h"

#include <sstream>

#include "cluster/cluster.h"
#include "graph/random_input.h"
#include "models/zoo.h"
#include "sim/latency_model.h"

namespace shoal {

void DeviceFlags::Add(CLI::App* cmd) {
  cmd->add_option("--devices", devices, "Number of equal devices");
  cmd->add_option("--cluster", cluster,
                  "Cluster file (YAML) listing the devices");
  cmd->add_option(
      "--shares", shares,
      "Relative speeds of the --devices, e.g. 2,1,1 (default equal)");
}

StatusOr<Cluster> DeviceFlags::ResolveCluster() const {
  if ((devices > 0) == !cluster.empty()) {
    return InvalidArgument("give one of --devices N or --cluster FILE.yaml");
  }
  if (!cluster.empty()) {
    if (!shares.empty()) {
      return InvalidArgument(
          "--shares goes with --devices; a cluster file "
          "gives each device's speed");
    }
    return LoadCluster(cluster);
  }
  Cluster c = EqualCluster(devices);
  std::vector<DeviceSpec>& out = c.devices;
  if (!shares.empty()) {
    std::stringstream ss(shares);
    std::string item;
    size_t i = 0;
    while (std::getline(ss, item, ',')) {
      double v = 0;
      try {
        v = std::stod(item);
      } catch (...) {
        v = -1;
      }
      if (!(v > 0) || i >= out.size()) {
        return InvalidArgument("--shares '" + shares + "' must be " +
                               std::to_string(out.size()) +
                               " positive numbers separated by commas");
      }
      out[i++].speed = v;
    }
    if (i != out.size()) {
      return InvalidArgument("--shares gives " + std::to_string(i) +
                             " speeds for " + std::to_string(out.size()) +
                             " devices");
    }
  }
  return c;
}

StatusOr<std::vector<PlanDevice>> DeviceFlags::Resolve() const {
  ASSIGN_OR_RETURN(Cluster c, ResolveCluster());
  return c.PlanDevices();
}

bool HasSlowLink(const Cluster& c) {
  for (const auto& d : c.devices) {
    if (d.link.bandwidth_bps > 0 && d.link.bandwidth_bps < 1e9) return true;
  }
  return false;
}

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

Tensor RandomPlanInput(const Plan& p, uint64_t seed,
                       std::optional<ImageNormalization>* pixels) {
  if (p.input_pixels && p.input_shape.size() == 4) {
    *pixels = DefaultNormalization(p.input_shape[1]);
    return RandomImage(p.input_shape, seed, **pixels);
  }
  pixels->reset();
  return RandomInput(p.input_shape, seed);
}

}  // namespace shoal
