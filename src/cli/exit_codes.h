// The exit codes of shoal and shoal-worker, documented in docs/cli.md: the
// CLI's convention, so they live with the commands, not with Status.
#ifndef SHOAL_CLI_EXIT_CODES_H_
#define SHOAL_CLI_EXIT_CODES_H_

#include "util/status.h"

namespace shoal {

// Every usage error (an unknown flag or subcommand, a missing argument, a
// value a flag refuses) exits with this, sysexits' EX_USAGE.
constexpr int kUsageExitCode = 64;

// 0 on success; 2 for an unsupported op or attribute (scripts tell them
// apart); 1 for any other error.
inline int ExitCodeFor(const Status& s) {
  if (s.ok()) return 0;
  if (s.code() == Code::kUnsupported) return 2;
  return 1;
}

}  // namespace shoal

#endif  // SHOAL_CLI_EXIT_CODES_H_
