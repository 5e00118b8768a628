// `shoal cluster up|down FILE.yaml`: an emulated cluster on this machine
// (emulate/emulated_cluster.h): one worker process per device, held to its
// device's CPU share, memory and link. `cluster scan` is in
// cluster_scan_cmd.cc.
#include <iostream>

#include "cli/commands.h"
#include "emulate/emulated_cluster.h"

namespace shoal {

void AddClusterCommand(CLI::App* app) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app->add_subcommand(
      "cluster",
      "Start or stop an emulated cluster on this machine, or find the "
      "workers on the network");
  cmd->require_subcommand(1);
  CLI::App* up =
      cmd->add_subcommand("up", "Start one limited worker process per device");
  up->add_option("file", *file, "Cluster file (YAML)")->required();
  auto mode = std::make_shared<std::string>("transport");
  up->add_option("--mode", *mode,
                 "transport: workers on 127.0.0.1, links shaped by their "
                 "transport; netns (root): each worker in a network namespace "
                 "with its own address, bandwidth shaped by the kernel "
                 "(default transport)")
      ->check(CLI::IsMember({"transport", "netns"}));
  auto recalibrate = std::make_shared<bool>(false);
  up->add_flag("--recalibrate", *recalibrate,
               "Measure this host's speed again for devices given by speed "
               "(it is kept in /tmp for every later cluster)");
  auto dilation = std::make_shared<double>(0);
  up->add_option("--dilation", *dilation,
                 "Stretch every emulated time (board compute, links, "
                 "timeouts) by K, for a host that cannot run the cluster's "
                 "boards in real time; bench and serve report board time "
                 "(default: chosen from the host's calibration when the "
                 "cluster names boards, else 1)");
  up->callback([file, mode, recalibrate, dilation] {
    ClusterUpOptions o;
    o.mode = *mode;
    o.recalibrate = *recalibrate;
    o.dilation = *dilation;
    throw CommandExit(ReportStatus(ClusterUp(*file, o, std::cout).status()));
  });
  CLI::App* down =
      cmd->add_subcommand("down", "Stop the workers of a cluster file");
  down->add_option("file", *file, "Cluster file (YAML)")->required();
  auto purge = std::make_shared<bool>(false);
  down->add_flag("--purge", *purge,
                 "Also remove the cluster's logs and its devices' weight "
                 "caches (kept otherwise, so the next up uploads nothing)");
  down->callback([file, purge] {
    throw CommandExit(ReportStatus(ClusterDown(*file, std::cout, *purge)));
  });
  AddClusterScanCommand(cmd);
}

}  // namespace shoal
