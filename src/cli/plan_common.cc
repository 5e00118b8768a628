#include "cli/plan_common.h"

#include "cluster/cluster.h"
#include "models/zoo.h"

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

}  // namespace shoal
