// Board classes: what a device is when a cluster file names its kind
// (`board: pi3b+`): its cores, memory, usual link and power draw, and how
// fast it computes with the best engine a user would run on one such board.
// The rates are fitted to ncnn's published per-model figures for the board
// (sim/board_fit.h refits them and compares each model's predicted time with
// the published one; docs/cluster-format.md "Board classes" lists both), so
// a cluster of emulated boards is measured against what one real board does.
#ifndef SHOAL_CLUSTER_BOARD_H_
#define SHOAL_CLUSTER_BOARD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/power.h"
#include "graph/cost.h"

namespace shoal {

// The LCP paper's Raspberry Pi 3 (TensorFlow, 2019): VGG16's 15.5 GMAC in
// 9.4 s (its Fig. 12). What `speed: 1` means without a board, and the
// `pi3-lcp` class, so the papers' tables can still be reproduced.
constexpr double kLcpPi3MacsPerSecond = 1.65e9;

// How fast a board computes, all cores on one inference. A node takes the
// longer of its arithmetic and its memory traffic (a roofline), plus a
// fixed cost when it runs as a step of its own (BoardNodeSeconds).
struct BoardRates {
  double winograd_macs_per_s = 0;   // 3x3 convolutions of stride 1
  double gemm_macs_per_s = 0;       // other convolutions, Gemm, MatMul
  double depthwise_macs_per_s = 0;  // depthwise convolutions
  double memory_bytes_per_s = 0;    // inputs, outputs and weights read
  double step_s = 0;                // each step: threads woken, caches cold
  bool operator==(const BoardRates&) const = default;
};

struct BoardClass {
  std::string name;   // as a cluster file names it: "pi3b+"
  std::string title;  // "Raspberry Pi 3 Model B+"
  std::string cpu;    // "Cortex-A53 1.4 GHz x 4"
  int cores = 1;
  int64_t memory_bytes = 0;
  // Its usual link (a device's `link` overrides it) and what it is.
  double link_bandwidth_bps = 0;
  double link_latency_s = 0;
  std::string link_title;
  PowerSpec power;
  BoardRates rates;
  // Where the rates come from: ncnn's published figures for this board
  // (sim/board_fit.h fits them), or, for a board ncnn publishes none for,
  // how they were estimated.
  std::string basis;
  bool fitted = false;
  // The LCP paper's Pi 3: priced per MAC as `speed: 1` without a board
  // (sim/latency_model.h), not by the roofline.
  bool lcp_paper = false;
};

// Every class, in the order docs and errors list them.
const std::vector<BoardClass>& BoardClasses();
// nullptr when there is none of that name.
const BoardClass* FindBoard(std::string_view name);
// "pi3b+, pi4b, ..." for messages.
std::string BoardNames();

// Seconds a board with `rates` takes for one node. A view (Flatten,
// Reshape) costs nothing; an elementwise or per-channel node (an
// activation, Add, BatchNormalization) streams its bytes and is usually
// fused into the step before it, so pays no step of its own; every other
// node pays a step and the longer of its MACs at its kernel's rate
// (MacKind) and its bytes at the memory's rate.
double BoardNodeSeconds(const BoardRates& rates, const NodeCost& cost);

// Seconds of a board's CPU to send, or to receive, one message of `bytes`:
// a step's cost (threads woken, caches cold, as a layer's) plus two passes
// over its bytes at the memory rate (serialising it and the socket's copy).
// The emulated worker holds each message for it (WorkerOptions::board);
// the planner and simulator charge it (LatencyModel::SendCpuSeconds).
double BoardMessageSeconds(const BoardRates& rates, int64_t bytes);

// The rates of a board at `speed` times its class (a cluster file's
// `speed` on a named board).
BoardRates ScaleRates(const BoardRates& rates, double speed);

// How much faster than the LCP paper's Pi 3 (`speed: 1` without a board) a
// board is, by its GEMM rate: what split sizes follow when classes mix.
double RelativeSpeed(const BoardClass& b);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_BOARD_H_
