// What `plan`, `cost` and `run` share: loading the model a plan is about and
// reading the devices from --devices / --cluster / --shares.
#ifndef SHOAL_CLI_PLAN_COMMON_H_
#define SHOAL_CLI_PLAN_COMMON_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "graph/weights.h"
#include "partition/plan_model.h"
#include "plan/plan.h"

namespace shoal {

struct DeviceFlags {
  int devices = 0;
  std::string cluster;
  std::string shares;  // "1,2,1": relative speeds for --devices
  void Add(CLI::App* cmd);
  StatusOr<std::vector<PlanDevice>> Resolve() const;
  // The cluster the devices come from: the file, or N equal devices (with
  // --shares as their speeds) on free links.
  StatusOr<Cluster> ResolveCluster() const;
};

}  // namespace shoal

#endif  // SHOAL_CLI_PLAN_COMMON_H_
