// The reference backend's quantized layers: a Conv, Gemm or MatMul whose
// data input and weight are both DequantizeLinear outputs,
//   DequantizeLinear(x_q) -> Conv | Gemm | MatMul <- DequantizeLinear(w_q)
// (x per tensor, w per tensor or per output channel, any int8 zero points),
// runs the integer kernel (kernels/reference/int8_kernels.h) on x_q and w_q
// themselves: int32 sums scaled once, as ONNX's ConvInteger semantics. It is
// the oracle of the oneDNN int8 primitives. A DQ whose every reader is such
// a layer is not run at all.
#ifndef SHOAL_ENGINE_INT8_REFERENCE_STEP_H_
#define SHOAL_ENGINE_INT8_REFERENCE_STEP_H_

#include <optional>

#include "engine/exec_builder.h"
#include "graph/quantization.h"

namespace shoal {

struct Int8RefLayer {
  const Node* x_dequant = nullptr;  // DQ of the data input (input 0)
  const Node* w_dequant = nullptr;  // DQ of the weight (input 1)
  QuantParams x, w;
};

// `layer` as an int8 layer of the reference backend, or nullopt (an f32
// layer, or quantized in a form the int8 kernels do not take, which then
// runs in f32 on the dequantized values).
std::optional<Int8RefLayer> MatchInt8RefLayer(const ExecBuilder& b,
                                              const Node& layer);

// Marks as fused the DQs whose outputs only int8 layers read, before any
// node is built (a weight's DQ may come before its layer's input Q).
void MarkInt8RefFusions(ExecBuilder& b);

// Adds `node`'s int8 reference step and returns true, or returns false when
// it is not an int8 layer.
StatusOr<bool> AddInt8ReferenceStep(ExecBuilder& b, const Node& node);

}  // namespace shoal

#endif  // SHOAL_ENGINE_INT8_REFERENCE_STEP_H_
