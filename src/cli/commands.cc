#include "cli/commands.h"

#include <iostream>

namespace shoal {

int ReportStatus(const Status& s) {
  if (s.ok()) return 0;
  std::cerr << "shoal: error: " << s.message() << std::endl;
  return ExitCodeFor(s);
}

void AddAdvertiseOption(CLI::App* cmd, std::string* advertise) {
  cmd->add_option(
      "--advertise", *advertise,
      "HOST[:PORT] the workers send results to: listen there (port 0 or "
      "none: any free port) and tell them (default: this machine's address "
      "on its route to the first device)");
}

StatusOr<std::optional<Shape>> ParseInputShapeFlag(const std::string& text) {
  if (text.empty()) return std::optional<Shape>();
  Shape s;
  if (!ParseShape(text, &s)) {
    return InvalidArgument(
        "--input-shape '" + text +
        "' is not a list of positive integers like 1,3,224,224");
  }
  return std::optional<Shape>(s);
}

}  // namespace shoal
