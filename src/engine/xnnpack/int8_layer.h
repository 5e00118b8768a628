// Quantized (QDQ) layers on XNNPACK. A Conv, Gemm or MatMul that the
// reference backend runs on its integer kernels (int8_reference_step.h:
// DQ(x_q) and DQ(int8 w, zero points 0, per tensor or per output channel),
// a constant bias) runs on XNNPACK in one of two ways, chosen per layer
// when the executor is built, the first that accepts winning:
//  - qc8 (qc8_layer.cc): where the layer's f32 output reaches the next
//    QuantizeLinear only through Relu / Clip, MaxPool and Reshape / Flatten,
//    each its producer's sole reader, XNNPACK's int8 convolution computes
//    that Q's output itself (requantized to its scale and zero point, the
//    activation as the output range, the MaxPool on int8 data) and the Q
//    vanishes. Equal to the reference's Q(...) within one quantization step.
//  - f32 sums (f32_sums_layer.cc): everywhere else, XNNPACK's f32 kernels
//    over the integer values (x_q - z_x and w_q as f32), then each output
//    channel's scale and the bias: exact as oneDNN's f32-sums path is.
// A fully connected layer is a 1x1 convolution over its rows as pixels.
// Int8 activations are s8 values of the builder (NHWC for 4-D tensors);
// the builder's reorders convert them where another kernel reads them.
#ifndef SHOAL_ENGINE_XNNPACK_INT8_LAYER_H_
#define SHOAL_ENGINE_XNNPACK_INT8_LAYER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/xnnpack/xnn_step.h"
#include "graph/quantization.h"

namespace shoal {

struct XnnInt8Layer {
  const Node* node = nullptr;
  const Node* w_dequant = nullptr;
  std::string source;  // the int8 values x's DQ reads
  QuantParams x, w;    // x per tensor; w per tensor or per output channel
  // [groups][O/g][kH][kW][I/g], XNNPACK's layout; a weight of a fully
  // connected layer is [N][K].
  std::vector<int8_t> weights;
  std::vector<float> bias;  // one per output channel, or empty
  std::string weight_name, bias_name;
  // The layer as a 2-D convolution over `batch` images of in_h x in_w.
  bool conv = false;  // NHWC activations; else rows [..., K], plain
  Shape in_shape, out_shape;
  size_t batch = 1, in_h = 1, in_w = 1;
  uint32_t kernel[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  uint32_t pad_top = 0, pad_right = 0, pad_bottom = 0, pad_left = 0;
  uint32_t groups = 1;
  size_t group_in = 0, group_out = 0;
  size_t out_channels() const { return groups * group_out; }
  // s_x * s_w[c], as the reference kernel forms it.
  float OutputScale(size_t c) const {
    return x.scale[0] * w.scale[w.per_tensor() ? 0 : c];
  }
  // The operator's parameters, for the key of a shared operator.
  std::string GeometryKey() const;
};

// `n` as a quantized layer XNNPACK can run, or nullopt (not quantized, or
// in a form left to the reference's integer kernels).
std::optional<XnnInt8Layer> MatchXnnInt8Layer(ExecBuilder& b, const Node& n);

// s8 data in XNNPACK's layout for a tensor of `shape`: NHWC for a 4-D one
// when `nhwc` (plain where the two are the same bytes, as NhwcDesc), plain
// otherwise.
memory::desc S8Desc(const Shape& shape, bool nhwc);

// The value holding the layer's int8 input as s8 data in its layout.
int Int8SourceValue(ExecBuilder& b, const XnnInt8Layer& l);

StatusOr<bool> BuildQc8Layer(ExecBuilder& b, const XnnInt8Layer& l);
StatusOr<bool> BuildF32SumsLayer(ExecBuilder& b, const XnnInt8Layer& l);

// The Conv, Gemm and MatMul builders ask this first: true when `n` was a
// quantized layer and now has its steps.
StatusOr<bool> BuildXnnInt8Layer(ExecBuilder& b, const Node& n);

}  // namespace shoal

#endif  // SHOAL_ENGINE_XNNPACK_INT8_LAYER_H_
