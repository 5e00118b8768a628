// `shoal zoo`: lists the built-in models.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "graph/cost.h"
#include "models/zoo.h"
#include "util/units.h"

namespace shoal {

void AddZooCommand(CLI::App* app) {
  auto* cmd = app->add_subcommand(
      "zoo", "List the built-in models (the papers' model zoo)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([json] {
    nlohmann::json out = nlohmann::json::array();
    if (!*json) {
      std::cout << std::left << std::setw(14) << "name" << std::setw(18)
                << "input" << std::right << std::setw(10) << "params"
                << std::setw(10) << "MACs"
                << "  reference\n";
    }
    for (const auto& e : Zoo::Global().entries()) {
      auto g = e.build(e.input_shape);
      if (!g.ok()) throw CommandExit(ReportStatus(g.status()));
      auto c = ComputeGraphCost(*g);
      if (!c.ok()) throw CommandExit(ReportStatus(c.status()));
      if (*json) {
        out.push_back({{"name", e.name},
                       {"input_shape", e.input_shape},
                       {"params", c->params},
                       {"macs", c->macs},
                       {"description", e.description},
                       {"reference", e.reference}});
      } else {
        std::cout << std::left << std::setw(14) << e.name << std::setw(18)
                  << ShapeToString(e.input_shape) << std::right << std::setw(10)
                  << HumanCount(c->params) << std::setw(10)
                  << HumanCount(c->macs) << "  " << e.reference << "\n";
      }
    }
    if (*json) std::cout << out.dump(2) << std::endl;
  });
}

}  // namespace shoal
