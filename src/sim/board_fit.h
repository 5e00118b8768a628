// Where the board classes' rates come from (cluster/board.h): ncnn's
// published per-model times on each board, the zoo models that match them,
// and a fit of the rates to those times. `shoal boards` prints each
// model's predicted time beside the published one; `shoal boards --fit`
// refits the rates (the table in cluster/board.cc holds the fit's result,
// which the test BoardFit.TableHoldsTheFit keeps true).
#ifndef SHOAL_SIM_BOARD_FIT_H_
#define SHOAL_SIM_BOARD_FIT_H_

#include <string>
#include <vector>

#include "cluster/board.h"
#include "util/status.h"

namespace shoal {

// One published figure: model `model` (a zoo name) on board class `board`,
// `ms` per inference with all four cores (ncnn's benchmark/README.md,
// `benchncnn` with 4 threads; the latest run per board that has the model).
struct PublishedTime {
  std::string board;
  std::string model;
  double ms = 0;
};

const std::vector<PublishedTime>& NcnnPublishedTimes();
// The published figures of one board, in table order.
std::vector<PublishedTime> PublishedFor(const std::string& board);

// Predicted milliseconds of zoo model `model` (default input) on a board
// with `rates`: the sum of its nodes' BoardNodeSeconds.
StatusOr<double> PredictModelMs(const BoardRates& rates,
                                const std::string& model);

struct BoardCheckRow {
  std::string model;
  double published_ms = 0;
  double predicted_ms = 0;
  double error() const { return predicted_ms / published_ms - 1.0; }
};
// Each published model of `board`, predicted with `rates`.
StatusOr<std::vector<BoardCheckRow>> CheckBoard(const std::string& board,
                                                const BoardRates& rates);

// Rates that fit `board`'s published times: least squares on the logs of
// predicted over published time (Nelder-Mead over the logs of the five
// rates), with a weak pull of the Winograd rate towards 1.5x the GEMM rate
// and the depthwise rate towards a quarter of it, since six models cannot
// pin five rates alone. Deterministic.
StatusOr<BoardRates> FitBoardRates(const std::string& board);

}  // namespace shoal

#endif  // SHOAL_SIM_BOARD_FIT_H_
