#include "sim/systolic.h"

#include <algorithm>
#include <cmath>

#include "graph/op_registry.h"

namespace shoal {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Partial sums are 32 bits whatever the operands are.
constexpr int64_t kAccumulatorBytes = 4;

}  // namespace

SystolicCost SystolicNode(const AcceleratorSpec& a, const NodeCost& c) {
  SystolicCost r;
  const double b = a.bytes_per_operand();
  const int64_t in_bytes = std::llround(c.input_elements * b);
  const int64_t out_bytes = std::llround(c.output_elements * b);
  const int64_t weight_bytes = std::llround(c.weight_elements * b);
  const bool on_chip = in_bytes + out_bytes <= a.sram_bytes;
  if (c.gemm.any()) {
    const GemmShape& g = c.gemm;
    const int64_t kb = CeilDiv(g.reduce, a.rows);
    const int64_t nb = CeilDiv(g.cols, a.cols);
    r.blocks = g.groups * kb * nb;
    const int64_t tree = static_cast<int64_t>(std::ceil(std::log2(a.rows)));
    auto block_cycles = [&](int64_t rows) {
      return std::max<int64_t>(rows, a.rows) + tree;
    };
    r.cycles = a.rows + r.blocks * block_cycles(g.rows);
    r.dram_bytes = weight_bytes;
    if (!on_chip) r.dram_bytes += in_bytes * nb + out_bytes;
    // A block's partial sums must stay in the accumulators (half the SRAM)
    // across the K blocks. When M x cols of them do not fit, either spill
    // them to DRAM for each K block but the first, or take M in chunks
    // that fit and load every weight block once per chunk: the cheaper in
    // DRAM bytes.
    const int64_t fit_rows =
        std::max<int64_t>(1, a.sram_bytes / 2 / (a.cols * kAccumulatorBytes));
    if (kb > 1 && g.rows > fit_rows) {
      const int64_t spill =
          2 * (kb - 1) * g.groups * g.rows * g.cols * kAccumulatorBytes;
      const int64_t chunks = CeilDiv(g.rows, fit_rows);
      const int64_t reload = weight_bytes * (chunks - 1);
      if (reload < spill) {
        const int64_t last = g.rows - (chunks - 1) * fit_rows;
        r.blocks *= chunks;
        r.cycles = a.rows + g.groups * kb * nb *
                                ((chunks - 1) * block_cycles(fit_rows) +
                                 block_cycles(last));
        r.dram_bytes += reload;
      } else {
        r.dram_bytes += spill;
      }
    }
    // The streamed rows (im2col: every window's K terms) once per column
    // block, the outputs once, the weights into the cells once.
    r.sram_bytes = std::llround(g.groups * nb * g.rows * g.reduce * b) +
                   out_bytes + weight_bytes;
  } else if (!SplitFactsOf(c.op).relayout) {
    r.cycles = CeilDiv(std::max(c.input_elements, c.output_elements), a.cols);
    r.dram_bytes = weight_bytes + (on_chip ? 0 : in_bytes + out_bytes);
    r.sram_bytes = in_bytes + out_bytes;
  }
  r.compute_s = r.cycles / a.clock_hz;
  r.dram_s = r.dram_bytes / a.dram_bytes_per_s;
  r.seconds = std::max(r.compute_s, r.dram_s);
  if (r.cycles > 0) {
    r.utilisation = double(c.macs) / (double(r.cycles) * a.rows * a.cols);
  }
  r.energy_j = c.macs * a.mac_j + r.sram_bytes * a.sram_j_per_byte +
               r.dram_bytes * a.dram_j_per_byte + a.static_w * r.seconds;
  return r;
}

}  // namespace shoal
