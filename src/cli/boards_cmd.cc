// `shoal boards`: the board classes a cluster file can name (cluster/board.h)
// and, for each, its rates and every published model time beside the time
// its rates predict (sim/board_fit.h). `--fit` refits the rates to the
// published times and prints them beside the table's.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cluster/board.h"
#include "cluster/swap.h"
#include "sim/board_fit.h"
#include "util/units.h"

namespace shoal {
namespace {

nlohmann::json RatesJson(const BoardRates& r) {
  return {{"winograd_macs_per_s", r.winograd_macs_per_s},
          {"gemm_macs_per_s", r.gemm_macs_per_s},
          {"depthwise_macs_per_s", r.depthwise_macs_per_s},
          {"memory_bytes_per_s", r.memory_bytes_per_s},
          {"step_s", r.step_s}};
}

void PrintRates(const char* label, const BoardRates& r) {
  std::printf(
      "  %-8s 3x3 conv %5.2f GMAC/s, other conv/fc %5.2f, depthwise %5.2f, "
      "memory %5.2f GB/s, step %.3f ms\n",
      label, r.winograd_macs_per_s / 1e9, r.gemm_macs_per_s / 1e9,
      r.depthwise_macs_per_s / 1e9, r.memory_bytes_per_s / 1e9, r.step_s * 1e3);
}

Status Run(bool fit, bool json) {
  nlohmann::json out = nlohmann::json::array();
  for (const BoardClass& b : BoardClasses()) {
    nlohmann::json jb = {{"name", b.name},
                         {"title", b.title},
                         {"cpu", b.cpu},
                         {"cores", b.cores},
                         {"memory_bytes", b.memory_bytes},
                         {"link_bandwidth_bps", b.link_bandwidth_bps},
                         {"link_latency_s", b.link_latency_s},
                         {"basis", b.basis},
                         {"rates", RatesJson(b.rates)}};
    if (!json) {
      std::printf("%s: %s (%s, %s), %s\n", b.name.c_str(), b.title.c_str(),
                  b.cpu.c_str(), HumanBytes(b.memory_bytes).c_str(),
                  b.link_title.c_str());
      std::printf("  rates: %s\n", b.basis.c_str());
      PrintRates("table", b.rates);
    }
    if (const FrameworkMemory* fm = FrameworkMemoryOf(&b)) {
      jb["swap"] = {{"system_bytes", fm->system_bytes},
                    {"resident_bytes", fm->resident_bytes},
                    {"layer_copies", fm->layer_copies},
                    {"swap_bytes_per_s", fm->swap_bytes_per_s},
                    {"source", fm->source}};
      if (!json) {
        std::printf(
            "  memory as its framework holds it: %s kept by the system, "
            "%s for the framework, the largest layer's weights %g times, "
            "paging at %s/s beyond (%s)\n",
            HumanBytes(fm->system_bytes).c_str(),
            HumanBytes(fm->resident_bytes).c_str(), fm->layer_copies,
            HumanBytes(static_cast<int64_t>(fm->swap_bytes_per_s)).c_str(),
            fm->source.c_str());
      }
    }
    if (fit && b.fitted) {
      ASSIGN_OR_RETURN(BoardRates f, FitBoardRates(b.name));
      jb["fit"] = RatesJson(f);
      if (!json) PrintRates("refit", f);
    }
    if (b.fitted) {
      ASSIGN_OR_RETURN(std::vector<BoardCheckRow> rows,
                       CheckBoard(b.name, b.rates));
      jb["models"] = nlohmann::json::array();
      for (const auto& r : rows) {
        jb["models"].push_back({{"model", r.model},
                                {"published_ms", r.published_ms},
                                {"predicted_ms", r.predicted_ms}});
        if (!json) {
          std::printf("  %-14s ncnn %8.1f ms   predicted %8.1f ms  %+4.0f %%\n",
                      r.model.c_str(), r.published_ms, r.predicted_ms,
                      100 * r.error());
        }
      }
    }
    out.push_back(std::move(jb));
  }
  if (json) std::cout << out.dump(2) << std::endl;
  return Status::Ok();
}

}  // namespace

void AddBoardsCommand(CLI::App* app) {
  auto* cmd = app->add_subcommand(
      "boards",
      "List the board classes a cluster file can name (board: pi3b+), with "
      "their rates and each published model time beside the predicted one");
  auto fit = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--fit", *fit,
                "Also refit each fitted class's rates to ncnn's published "
                "times and print them beside the table's");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([fit, json] {
    Status st = Run(*fit, *json);
    if (!st.ok()) throw CommandExit(ReportStatus(st));
  });
}

}  // namespace shoal
