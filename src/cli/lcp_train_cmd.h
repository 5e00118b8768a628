// `shoal lcp train`, added under `shoal lcp` by cli/lcp_cmd.cc.
#ifndef SHOAL_CLI_LCP_TRAIN_CMD_H_
#define SHOAL_CLI_LCP_TRAIN_CMD_H_

#include <CLI/CLI.hpp>

#include "train/trainer.h"

namespace shoal {

void AddLcpTrainCommand(CLI::App* lcp);

// The time left in the whole training run, in seconds, at the pace of the
// current epoch so far; negative before its first batch.
double TrainSecondsLeft(const TrainProgress& p);

}  // namespace shoal

#endif  // SHOAL_CLI_LCP_TRAIN_CMD_H_
