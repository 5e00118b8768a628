#include "sim/systolic.h"

#include <gtest/gtest.h>

#include "graph/cost.h"
#include "models/load_model.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

// A matrix product of [m x k] by [k x n], its tensors as a conv's would be.
NodeCost Gemm(int64_t m, int64_t k, int64_t n, int64_t groups = 1) {
  NodeCost c;
  c.op = "Conv";
  c.gemm = GemmShape{m, k, n, groups};
  c.macs = m * k * n * groups;
  c.weight_elements = k * n * groups;
  c.input_elements = m * k * groups;  // as if 1x1: no im2col growth
  c.output_elements = m * n * groups;
  return c;
}

AcceleratorSpec Paper() {
  AcceleratorSpec a;
  a.present = true;
  return a;
}

TEST(Systolic, CyclesFollowTheBlocksOfTheArray) {
  // K = 64: two blocks of 32 rows; N = 128: two of 64 columns. Each block
  // streams its 100 rows plus the adder tree's 5 stages; the first
  // block's weights load (32 cycles) before anything starts.
  const SystolicCost s = SystolicNode(Paper(), Gemm(100, 64, 128));
  EXPECT_EQ(s.blocks, 4);
  EXPECT_EQ(s.cycles, 32 + 4 * (100 + 5));
  EXPECT_NEAR(s.utilisation, 100.0 * 64 * 128 / (452.0 * 32 * 64), 1e-12);
  EXPECT_NEAR(s.compute_s, 452 / 53.125e6, 1e-15);
}

TEST(Systolic, NarrowLayersLeaveColumnsIdle) {
  // A wide conv fills the array; an LCP branch's eighth of its output
  // channels fills 8 of the 64 columns.
  const SystolicCost wide = SystolicNode(Paper(), Gemm(3136, 576, 64));
  const SystolicCost narrow = SystolicNode(Paper(), Gemm(3136, 576, 8));
  EXPECT_GT(wide.utilisation, 0.99);
  EXPECT_NEAR(narrow.utilisation, wide.utilisation / 8, 1e-3);
  EXPECT_EQ(narrow.cycles, wide.cycles) << "as long, an eighth of the work";
}

TEST(Systolic, AFullyConnectedLayerWaitsForItsWeights) {
  // One input row: each block's 32 rows of weights take longer to load
  // than its one row takes to stream, so the array is busy loading.
  const SystolicCost fc = SystolicNode(Paper(), Gemm(1, 9216, 4096));
  EXPECT_EQ(fc.cycles, 32 + (9216 / 32) * (4096 / 64) * (32 + 5));
  EXPECT_LT(fc.utilisation, 0.03);
  // All its 8-bit weights (36 MiB) come from DRAM, once.
  EXPECT_EQ(fc.dram_bytes, int64_t{9216} * 4096);
  // At the ASIC's 800 MHz the loads are quick and DRAM is what it waits on.
  AcceleratorSpec asic = Paper();
  asic.clock_hz = 800e6;
  const SystolicCost fast = SystolicNode(asic, Gemm(1, 9216, 4096));
  EXPECT_TRUE(fast.memory_bound());
  EXPECT_NEAR(fast.seconds, 9216.0 * 4096 / 3.2e9, 1e-12);
}

TEST(Systolic, ActivationsOffChipAreStreamedPerColumnBlock) {
  AcceleratorSpec a = Paper();
  a.sram_bytes = 4096;
  // 1 MB of input (8-bit) and 512 KB of output do not fit in 4 KiB: the
  // input is read once for each of the 2 column blocks.
  const NodeCost c = Gemm(4096, 256, 128);
  const SystolicCost s = SystolicNode(a, c);
  // The 32-bit partial sums of 4096 rows by 64 columns do not fit in half
  // of 4 KiB either: spilling them for 7 of the 8 K blocks would move
  // 29 MB, taking M in chunks of 8 rows and reloading the 32 KiB of
  // weights for each of the 512 chunks 16.7 MB: the chunks win.
  EXPECT_EQ(s.dram_bytes,
            c.weight_elements * 512 + 2 * c.input_elements + c.output_elements);
  EXPECT_EQ(s.blocks, 8 * 2 * 512);  // K blocks x column blocks x chunks
  // With the paper's 512 KiB they stay on chip, but for the weights.
  a.sram_bytes = int64_t{8} << 20;
  EXPECT_EQ(SystolicNode(a, c).dram_bytes, c.weight_elements);
}

// An SRAM too small for even one row of a block's partial sums: reloading
// the weights for every row would cost more than spilling the sums, so
// they spill.
TEST(Systolic, PartialSumsSpillWhenNotEvenARowFits) {
  AcceleratorSpec a = Paper();
  a.sram_bytes = 1024;
  a.cols = 256;  // a row of partial sums: 1 KiB, more than half the SRAM
  const NodeCost c = Gemm(10, 64, 256);
  const SystolicCost s = SystolicNode(a, c);
  EXPECT_EQ(s.blocks, 2);
  EXPECT_EQ(s.cycles, 32 + 2 * (32 + 5));
  const int64_t spill = 2 * 1 * 10 * 256 * 4;  // the 2nd K block's
  EXPECT_EQ(s.dram_bytes,
            c.weight_elements + c.input_elements + c.output_elements + spill);
}

TEST(Systolic, EnergyAddsMacsMemoryAndStaticPower) {
  const NodeCost c = Gemm(100, 64, 128);
  const SystolicCost s = SystolicNode(Paper(), c);
  const AcceleratorSpec a = Paper();
  EXPECT_NEAR(s.energy_j,
              c.macs * a.mac_j + s.sram_bytes * a.sram_j_per_byte +
                  s.dram_bytes * a.dram_j_per_byte + a.static_w * s.seconds,
              1e-18);
}

TEST(Systolic, LayoutOnlyLayersAreFreeAndOthersUseTheActivationUnit) {
  NodeCost flatten;
  flatten.op = "Flatten";
  flatten.input_elements = flatten.output_elements = 9216;
  EXPECT_EQ(SystolicNode(Paper(), flatten).cycles, 0);
  NodeCost relu = flatten;
  relu.op = "Relu";
  EXPECT_EQ(SystolicNode(Paper(), relu).cycles, 9216 / 64);
}

TEST(Systolic, ConvAndGemmDeclareTheirMatrixProducts) {
  auto m = LoadModel("alexnet", LoadOptions{});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto cost = ComputeGraphCost(m->graph);
  ASSERT_TRUE(cost.ok());
  for (const auto& c : cost->nodes) {
    if (c.macs == 0) {
      EXPECT_FALSE(c.gemm.any()) << c.name;
      continue;
    }
    ASSERT_TRUE(c.gemm.any()) << c.name;
    EXPECT_EQ(c.gemm.rows * c.gemm.reduce * c.gemm.cols * c.gemm.groups, c.macs)
        << c.name;
  }
  // features.0: 64 filters of 3 x 11 x 11 over 55 x 55 outputs.
  EXPECT_EQ(cost->nodes[0].gemm.rows, 55 * 55);
  EXPECT_EQ(cost->nodes[0].gemm.reduce, 3 * 11 * 11);
  EXPECT_EQ(cost->nodes[0].gemm.cols, 64);
}

TEST(Systolic, ADeviceWithTheArrayIsPricedOnIt) {
  Cluster c = EqualCluster(2);
  c.devices[1].accelerator = Paper();
  const LatencyModel m = LatencyModel::FromCluster(c);
  const NodeCost conv = Gemm(3136, 576, 64);
  EXPECT_DOUBLE_EQ(m.NodeSeconds(1, conv), SystolicNode(Paper(), conv).seconds);
  EXPECT_DOUBLE_EQ(m.MacsPerSecond(1), 32.0 * 64 * 53.125e6);
  EXPECT_FALSE(m.SameDevice(0, 1));
  EXPECT_FALSE(m.Quota(1).limited());
}

TEST(Systolic, SpecsParseAndSayWhatIsWrong) {
  auto a = ParseAcceleratorInline(
      "rows=16,cols=32,clock=800MHz,sram=1MiB,"
      "dram=6.4GB/s,bits=16,static=20mW");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->rows, 16);
  EXPECT_EQ(a->cols, 32);
  EXPECT_DOUBLE_EQ(a->clock_hz, 800e6);
  EXPECT_EQ(a->sram_bytes, int64_t{1} << 20);
  EXPECT_DOUBLE_EQ(a->dram_bytes_per_s, 6.4e9);
  EXPECT_DOUBLE_EQ(a->bytes_per_operand(), 2);
  EXPECT_DOUBLE_EQ(a->static_w, 0.02);
  for (const auto& [text, says] :
       std::vector<std::pair<std::string, std::string>>{
           {"rows=0", "whole number"},
           {"clock=fast", "frequency"},
           {"bits=12", "8, 16 or 32"},
           {"banks=4", "unknown key 'banks'"},
           {"rows", "KEY=VALUE"}}) {
    auto bad = ParseAcceleratorInline(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(says), std::string::npos)
        << text << ": " << bad.status().message();
  }
  auto block = ParseCluster(R"(devices:
  - {name: npu, accelerator: {kind: systolic, rows: 32, cols: 64, clock: 800MHz}}
)",
                            "test");
  ASSERT_TRUE(block.ok()) << block.status().message();
  EXPECT_TRUE(block->devices[0].accelerator.present);
  EXPECT_DOUBLE_EQ(block->devices[0].accelerator.clock_hz, 800e6);
  auto kindless = ParseCluster(
      "devices:\n  - {name: npu, accelerator: {rows: 32}}\n", "test");
  ASSERT_FALSE(kindless.ok());
  EXPECT_NE(kindless.status().message().find("kind: systolic"),
            std::string::npos)
      << kindless.status().message();
  EXPECT_NE(kindless.status().message().find("npu"), std::string::npos);
}

}  // namespace
}  // namespace shoal
