// `shoal ops`: the operators shoal supports, from the op registry.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "cli/operator_docs.h"
#include "engine/exec_builder.h"
#include "engine/xnnpack/xnn_step.h"
#include "graph/op_registry.h"

namespace shoal {

void AddOpsCommand(CLI::App* app) {
  auto* cmd = app->add_subcommand(
      "ops", "List the supported operators, their kernels and split rules");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown,
                "Print docs/operators.md (shapes, attributes, kernels, "
                "split rules)");
  cmd->callback([markdown] {
    if (*markdown) {
      std::cout << OperatorsMarkdown();
      return;
    }
    const OpRegistry& reg = OpRegistry::Global();
    for (const std::string& name : reg.Names()) {
      const bool dnnl = OneDnnKernelRegistry::Global().Find(name) != nullptr;
      const bool xnn = XnnpackKernelRegistry::Global().Find(name) != nullptr;
      std::cout << std::left << std::setw(20) << name << std::setw(28)
                << std::string("reference") + (dnnl ? ", oneDNN" : "") +
                       (xnn ? ", XNNPACK" : "")
                << DescribeSplit(reg.Find(name)->split()) << "\n";
    }
  });
}

}  // namespace shoal
