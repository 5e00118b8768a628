// shoal: one neural-network inference across a cluster of small devices.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "models/load_model.h"
#include "runtime/process_setup.h"
#include "util/net_address.h"
#include "util/version.h"

int main(int argc, char** argv) {
  shoal::UseSystemResolver();  // `pi.local` through nsswitch and mDNS
  shoal::SkipMutexDeadlockChecks();
  shoal::MapLargeAllocations();
  shoal::QuietRepeatedGrpcLogs();
  CLI::App app{
      "shoal: run one neural-network inference across a cluster of small "
      "devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("shoal ") + shoal::kShoalVersion);
  shoal::AddZooCommand(&app);
  shoal::AddBoardsCommand(&app);
  shoal::AddOpsCommand(&app);
  shoal::AddAnalyzeCommand(&app);
  shoal::AddInferCommand(&app);
  shoal::AddDemoCommand(&app);
  shoal::AddExportCommand(&app);
  shoal::AddQuantizeCommand(&app);
  shoal::AddPlanCommand(&app);
  shoal::AddCostCommand(&app);
  shoal::AddRunCommand(&app);
  shoal::AddWorkerCommand(&app);
  shoal::AddClusterCommand(&app);
  shoal::AddBenchCommand(&app);
  shoal::AddProfileCommand(&app);
  shoal::AddSimulateCommand(&app);
  shoal::AddLcpCommand(&app);
  shoal::AddDatasetCommand(&app);
  shoal::AddServeCommand(&app);
  shoal::AddCertsCommand(&app);
  shoal::AddKernelsCommand(
      &app, [](const std::string& spec,
               const std::optional<shoal::Shape>& shape, uint64_t seed) {
        shoal::LoadOptions lo;
        lo.input_shape = shape;
        lo.with_weights = true;
        lo.seed = seed;
        return shoal::LoadModel(spec, lo);
      });
  return shoal::RunCommandLine(&app, [&] { app.parse(argc, argv); });
}
