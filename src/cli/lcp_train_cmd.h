// `shoal lcp train`, added under `shoal lcp` by cli/lcp_cmd.cc.
#ifndef SHOAL_CLI_LCP_TRAIN_CMD_H_
#define SHOAL_CLI_LCP_TRAIN_CMD_H_

#include <CLI/CLI.hpp>

namespace shoal {

void AddLcpTrainCommand(CLI::App* lcp);

}  // namespace shoal

#endif  // SHOAL_CLI_LCP_TRAIN_CMD_H_
