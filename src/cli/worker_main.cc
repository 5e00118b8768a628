// shoal-worker: the daemon one device runs, built alone
// (-DSHOAL_WORKER_ONLY=ON): `shoal-worker --listen HOST:PORT ...` takes the
// options of `shoal worker` (docs/cli.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "runtime/process_setup.h"
#include "util/net_address.h"
#include "util/version.h"

int main(int argc, char** argv) {
  shoal::UseSystemResolver();  // `pi.local` through nsswitch and mDNS
  shoal::SkipMutexDeadlockChecks();
  shoal::MapLargeAllocations();
  shoal::QuietRepeatedGrpcLogs();
  CLI::App app{"shoal-worker: the daemon a shoal device runs"};
  app.set_version_flag("--version",
                       std::string("shoal ") + shoal::kShoalVersion);
  shoal::AddWorkerCommand(&app);
  // What the board's engine runs a zoo model on (docs/real-devices.md).
  shoal::AddKernelsCommand(&app);
  // A board gets its certificate (docs/real-devices.md).
  shoal::AddEnrollCommand(&app);
  // `worker` is the default: `shoal-worker --listen ...`.
  app.require_subcommand(0, 1);
  app.fallthrough();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || (args[0] != "worker" && args[0] != "kernels" &&
                       args[0] != "enroll" && args[0] != "--version")) {
    args.insert(args.begin(), "worker");
  }
  std::reverse(args.begin(), args.end());
  return shoal::RunCommandLine(&app, [&] { app.parse(args); });
}
