// The cost of a layer on the LCP paper's systolic array (cluster/
// accelerator.h; docs/accelerator.md): cycles, how much of the array the
// layer keeps busy, the bytes it moves to and from DRAM and SRAM, its time
// and its energy. An analytical model of the paper's dataflow, not a
// simulation of its circuits.
//
// A conv (as im2col) or a fully connected layer is a matrix product of the
// activations [M x K] by the weights [K x N] (per group). The weights are
// the stationary operand: they are cut into blocks of rows x cols (K by
// rows, N by cols) that the array holds one at a time; the activations
// stream through in rows of K's block, one per cycle, each column summing
// its `rows` products in an adder tree of log2(rows) stages. A block thus
// takes max(M, rows) cycles (its successor's weights load through the first
// row, `rows` cycles, into the cells' second buffer meanwhile) plus the
// tree's depth; only the first block's load is not hidden. The array does
// rows x cols MACs per cycle at best, so utilisation is MACs / (cycles x
// rows x cols): a layer with fewer output channels than columns, or fewer
// reduction terms than rows, leaves cells idle, which is what narrow LCP
// branches do to the array.
//
// Memory: the weights come from DRAM once. Activations stay in the SRAM
// when a layer's input and output fit there together; otherwise the input
// is streamed from DRAM once per column block and the output written back.
// Partial sums (32-bit) stay in the accumulators when a block's M x cols of
// them fit in half the SRAM; else the layer either spills them to DRAM for
// each K block but the first, or takes M in chunks that fit and loads its
// weights once per chunk, whichever moves fewer DRAM bytes. A layer's time is
// the longer of its cycles and its DRAM traffic (the two overlap).
//
// Layers without MACs (activations, pooling, normalisation, adds) run in
// the activation and pooling unit behind the array, `cols` elements per
// cycle; layers that only relabel the layout (Flatten, Reshape) are free.
#ifndef SHOAL_SIM_SYSTOLIC_H_
#define SHOAL_SIM_SYSTOLIC_H_

#include <cstdint>

#include "cluster/accelerator.h"
#include "graph/cost.h"

namespace shoal {

struct SystolicCost {
  int64_t cycles = 0;
  int64_t blocks = 0;      // weight blocks the array held (0: not a GEMM)
  double utilisation = 0;  // of the array's cells, over its cycles
  int64_t dram_bytes = 0;  // weights, spilled activations, partial sums
  int64_t sram_bytes = 0;  // read and written on chip
  double compute_s = 0;    // cycles / clock
  double dram_s = 0;       // DRAM bytes / its rate
  double seconds = 0;      // the longer of the two
  double energy_j = 0;     // MACs, SRAM, DRAM and static power
  bool memory_bound() const { return dram_s > compute_s; }
};

SystolicCost SystolicNode(const AcceleratorSpec& a, const NodeCost& c);

}  // namespace shoal

#endif  // SHOAL_SIM_SYSTOLIC_H_
