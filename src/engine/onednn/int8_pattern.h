// The quantized layers oneDNN runs on int8 primitives: in QDQ form,
//   x -> QuantizeLinear -> DequantizeLinear -> Conv | Gemm | MatMul
//   (DequantizeLinear(w), bias; a MatMul's w is a [K, N] constant)
// where every reader of the quantized x is such a layer, or the same with
// x_q -> DequantizeLinear where x_q already holds int8 values (a graph
// fragment's input). The Q (or that input) becomes one reorder into u8 / s8
// data, the DQs vanish, and the layer's primitive reads
// the int8 data and s8 weights, accumulates in s32 and scales its output
// back to f32 (a following ReLU fused as usual). Where oneDNN's int8 sums
// would saturate (engine/int8_path.h), the layer runs on f32 primitives
// over the same integer values instead: the int8 data reordered to f32,
// the weights' int8 values as f32, the scales a post-op after the sums.
#ifndef SHOAL_ENGINE_ONEDNN_INT8_PATTERN_H_
#define SHOAL_ENGINE_ONEDNN_INT8_PATTERN_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/exec_builder.h"
#include "engine/onednn/primitive_step.h"
#include "graph/quantization.h"

namespace shoal {

struct Int8Layer {
  // The tensor of int8 values the layer's input DQ reads, and the Q that
  // produces it; no Q when it arrives quantized (a graph input where a plan
  // cut the model at the Q's output): then a plain reorder converts it.
  std::string source;
  const Node* quantize = nullptr;
  const Node* weight_dequant = nullptr;  // DQ of the int8 weight
  QuantParams x, w;                      // w: per tensor or per channel
  // The input's zero point is -128: its int8 values plus 128 are u8 data
  // with zero point 0. Otherwise it is 0 and the data is s8.
  bool unsigned_x = false;
  // The builder's Int8Path is kF32Sums: f32 primitives on the integers.
  bool f32_sums = false;
};

// `layer` as an int8 layer, or nullopt when it is not one (a layer that is
// not quantized, or quantized in a form the primitives do not take).
std::optional<Int8Layer> MatchInt8Layer(const ExecBuilder& b,
                                        const Node& layer);

// The value holding the layer's int8 input as u8 / s8 data: the Q's reorder
// made it, or, for an input that arrives quantized, a reorder added here
// the first time a layer asks (f32 integers to s8, or plus 128 to u8).
StatusOr<int> Int8Input(ExecBuilder& b, const Int8Layer& l, const Node& layer);

// u8 or s8: the data type of the layer's quantized input.
memory::data_type Int8SourceType(const Int8Layer& l);

// The data types of the layer's primitive: its input's (u8 / s8, or f32
// with f32 sums) and its weights' (s8, or f32).
memory::data_type Int8ComputeSourceType(const Int8Layer& l);
memory::data_type Int8WeightType(const Int8Layer& l);

// Applies the layer's output scales, x's scale times each output channel's
// weight scale, to its sums, and returns them, one per channel of
// `channels` (`channel_axis` of the output's `rank` axes: 1 for a conv or
// an inner product, the last for a matmul). On int8 primitives they are
// the attribute's output scales; with f32 sums, whose convolutions and
// inner products take none, a binary post-op multiplying each channel,
// first in the attribute's post-ops: its operand is added to `step` once
// the step exists (AddInt8ScaleOperand).
struct Int8Scales {
  std::vector<float> scales;
  std::optional<memory> operand;  // the post-op's, with f32 sums
};
Int8Scales SetInt8OutputScales(ExecBuilder& b, const Int8Layer& l,
                               int64_t channels, int rank, int channel_axis,
                               dnnl::primitive_attr* attr);

// The bias in the accumulator's units: oneDNN 2.x adds it to the s32 sums
// before the output scales. Unchanged when `scales` is empty (f32 layer).
std::vector<float> Int8Bias(const std::vector<float>& bias,
                            const std::vector<float>& scales);

// Marks the DequantizeLinear nodes that int8 layers absorb as fused, before
// any node is built (a weight's DQ may come before its layer's input Q).
void MarkInt8Fusions(ExecBuilder& b);

// Gives `step` the scales' post-op operand, if any, and marks it an int8
// layer (ExecutorStats::int8_layers).
void FinishInt8Step(Int8Scales& s, PrimitiveStep* step);

}  // namespace shoal

#endif  // SHOAL_ENGINE_ONEDNN_INT8_PATTERN_H_
