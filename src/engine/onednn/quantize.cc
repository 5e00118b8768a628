// QuantizeLinear before int8 layers (int8_pattern.h) as one oneDNN reorder
// into u8 or s8 data, in the layout int8 convolutions read (nhwc), which the
// layers' DQs then stand for; an input that arrives quantized gets a plain
// reorder instead (Int8Input). Any other Q or DQ runs on the reference.
#include "engine/onednn/int8_pattern.h"
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

// The int8 data's layout: nhwc for 4-D (what int8 convolutions read),
// plain otherwise.
memory::desc Int8DataDesc(const Shape& shape, memory::data_type dt) {
  memory::dims dims(shape.begin(), shape.end());
  if (dims.empty()) dims = {1};
  return dims.size() == 4 ? memory::desc(dims, dt, memory::format_tag::acdb)
                          : PlainDims(dims, dt);
}

StatusOr<bool> BuildQuantize(ExecBuilder& b, const Node& q) {
  std::optional<Int8Layer> layer;
  for (const Node* dq : b.Consumers(q.outputs[0])) {
    for (const Node* l : b.Consumers(dq->outputs[0])) {
      layer = MatchInt8Layer(b, *l);
      break;
    }
    break;
  }
  if (!layer || layer->quantize != &q) return false;
  const int x = b.ValueOf(q.inputs[0]);
  const Value xv = b.value(x);
  const memory::data_type dt =
      layer->unsigned_x ? memory::data_type::u8 : memory::data_type::s8;
  const memory::desc dst = Int8DataDesc(xv.shape, dt);
  dnnl::primitive_attr attr = ScratchpadAttr();
  // u8 = q + 128 for zero point -128: the reorder rounds x / scale and
  // saturates to [0, 255], which is the int8 quantization shifted.
  attr.set_output_scales(0, {1.f / layer->x.scale[0]});
  auto pd_or = TryDnnl([&] {
    return dnnl::reorder::primitive_desc(b.engine(), xv.md, b.engine(), dst,
                                         attr);
  });
  if (!pd_or.ok()) return false;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::reorder(*pd_or));
  step->AddInput(DNNL_ARG_FROM, x, xv.md);
  const int y = b.NewValue(q.outputs[0], xv.shape, dst);
  step->AddOutput(DNNL_ARG_TO, y, dst);
  step->label = q.name;
  b.AddStep(std::move(step));
  b.Define(q.outputs[0], y);
  for (const Node* dq : b.Consumers(q.outputs[0])) b.Define(dq->outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("QuantizeLinear", BuildQuantize);

}  // namespace

StatusOr<int> Int8Input(ExecBuilder& b, const Int8Layer& l, const Node& layer) {
  const int have = b.ValueOf(layer.inputs[0]);
  if (have >= 0) return have;  // the Q's reorder, or an earlier layer's
  if (l.quantize) {
    return Internal("int8 layer '" + layer.name + "': quantize '" +
                    l.quantize->name + "' was not built before it");
  }
  const int x = b.ValueOf(l.source);
  if (x < 0) return Internal("tensor '" + l.source + "' has no value");
  const Value xv = b.value(x);
  const memory::desc dst = Int8DataDesc(xv.shape, Int8SourceType(l));
  // The values are int8 integers already: scale 1, and for u8 the zero
  // point -128 becomes +128. The runtime delivers exact integers in
  // [-128, 127]; anything else would be rounded to nearest (ties to even)
  // and saturated to the type's range here, where the reference backend
  // reports it as an error.
  dnnl::primitive_attr attr = ScratchpadAttr();
  if (l.unsigned_x) attr.set_zero_points(DNNL_ARG_DST, 0, {-kInt8Min});
  auto pd = TryDnnl([&] {
    return dnnl::reorder::primitive_desc(b.engine(), xv.md, b.engine(), dst,
                                         attr);
  });
  // The DQs are marked fused: there is no f32 path left.
  if (!pd.ok()) return pd.status().WithContext("int8 input '" + l.source + "'");
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::reorder(*pd));
  step->AddInput(DNNL_ARG_FROM, x, xv.md);
  const int y = b.NewValue(l.source + ":int8", xv.shape, dst);
  step->AddOutput(DNNL_ARG_TO, y, dst);
  step->label = "reorder " + l.source + " to " + (l.unsigned_x ? "u8" : "s8");
  b.AddStep(std::move(step));
  for (const Node* dq : b.Consumers(l.source)) b.Define(dq->outputs[0], y);
  return y;
}

}  // namespace shoal
