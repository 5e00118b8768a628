// QuantizeLinear and DequantizeLinear (ONNX opset 13 semantics, int8): the
// scale and zero point are attributes, one per tensor or one per slice along
// `axis`. Quantized values are exact integers held in f32 tensors.
#include "graph/op_registry.h"
#include "graph/quantization.h"

namespace shoal {
namespace {

Status InferQuant(const Node& node, const InputShapes& in,
                  std::vector<Shape>* out) {
  RETURN_IF_ERROR(ReadQuantParams(node, in[0]).status());
  (*out)[0] = in[0];
  return Status::Ok();
}

// Per tensor a Q or DQ is elementwise; per axis it reads only a weight
// (the ONNX import refuses per-axis parameters on activations), which is
// never split as an elementwise region.
SHOAL_REGISTER_OP("QuantizeLinear")
    .Doc(
        "any shape -> the same shape: clamp(round_half_even(x / scale) + "
        "zero_point, -128, 127); scale and int8 zero_point per tensor, or "
        "per slice along `axis`")
    .Attr("scale")
    .Attr("zero_point")
    .Attr("axis")
    .Elementwise()
    .Quantization(QuantRole::kQuantize)
    .Infer(InferQuant);

SHOAL_REGISTER_OP("DequantizeLinear")
    .Doc(
        "any shape -> the same shape: (x - zero_point) * scale; scale and "
        "int8 zero_point per tensor, or per slice along `axis`")
    .Attr("scale")
    .Attr("zero_point")
    .Attr("axis")
    .Elementwise()
    .Quantization(QuantRole::kDequantize)
    .Infer(InferQuant);

}  // namespace
}  // namespace shoal
