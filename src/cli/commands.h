// Each subcommand lives in its own file and registers itself here.
#ifndef SHOAL_CLI_COMMANDS_H_
#define SHOAL_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

#include "cli/exit_codes.h"
#include "graph/shape.h"
#include "graph/weights.h"
#include "security/tls_identity.h"
#include "util/status.h"

namespace shoal {

void AddZooCommand(CLI::App* app);
void AddBoardsCommand(CLI::App* app);
void AddOpsCommand(CLI::App* app);
void AddAnalyzeCommand(CLI::App* app);
void AddInferCommand(CLI::App* app);
void AddDemoCommand(CLI::App* app);
void AddExportCommand(CLI::App* app);
void AddQuantizeCommand(CLI::App* app);
void AddPlanCommand(CLI::App* app);
void AddCostCommand(CLI::App* app);
void AddRunCommand(CLI::App* app);
void AddWorkerCommand(CLI::App* app);
void AddClusterCommand(CLI::App* app);
void AddClusterScanCommand(CLI::App* cluster);  // `cluster scan`
void AddBenchCommand(CLI::App* app);
void AddProfileCommand(CLI::App* app);
void AddSimulateCommand(CLI::App* app);
void AddLcpCommand(CLI::App* app);
void AddDatasetCommand(CLI::App* app);  // `dataset extract`
void AddServeCommand(CLI::App* app);    // serve and infer-remote
void AddCertsCommand(CLI::App* app);
// `enroll` under `parent`: `shoal certs enroll`, `shoal-worker enroll`.
void AddEnrollCommand(CLI::App* parent);
// How `kernels` loads MODEL with seeded weights: the full shoal passes
// LoadModel (zoo names and .onnx files); null, the zoo alone (the worker's
// build, which has no ONNX importer).
using KernelsModelLoader = std::function<StatusOr<Model>(
    const std::string& spec, const std::optional<Shape>& input_shape,
    uint64_t seed)>;
void AddKernelsCommand(CLI::App* app, KernelsModelLoader load = nullptr);

// Prints "shoal: error: ..." for a failed status and returns the exit code
// (0 on success). Subcommand callbacks end with `throw CommandExit(code)`.
int ReportStatus(const Status& s);

struct CommandExit : CLI::RuntimeError {
  explicit CommandExit(int code) : CLI::RuntimeError(code) {}
};

// Runs `parse` (CLI11's parse, which runs the chosen command): returns the
// command's exit code; a parse error is reported as CLI11 does, and any
// other exception as "shoal: error: <command> failed ..." with exit 1.
int RunCommandLine(CLI::App* app, const std::function<void()>& parse);

// --advertise HOST[:PORT] of a command that coordinates workers (run,
// bench, serve, profile): where the workers reach this process.
void AddAdvertiseOption(CLI::App* cmd, std::string* advertise);

// --tls-ca, --tls-cert, --tls-key of a command that talks gRPC without a
// cluster file (worker, infer-remote); `whose` says whose certificate.
void AddTlsOptions(CLI::App* cmd, TlsPaths* paths, const std::string& whose);
// The identity the flags name (null when none is given), checked; errors
// name the flag's file.
StatusOr<std::shared_ptr<const TlsIdentity>> LoadTlsFlags(
    const TlsPaths& paths);

// Parses "1,3,224,224" for --input-shape; empty text gives nullopt.
StatusOr<std::optional<Shape>> ParseInputShapeFlag(const std::string& text);

}  // namespace shoal

#endif  // SHOAL_CLI_COMMANDS_H_
