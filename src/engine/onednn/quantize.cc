// QuantizeLinear before int8 layers (int8_pattern.h) as one oneDNN reorder
// into u8 or s8 data, in the layout int8 convolutions read (nhwc), which the
// layers' DQs then stand for. Any other Q or DQ runs on the reference.
#include "engine/onednn/int8_pattern.h"
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

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
  memory::dims dims(xv.shape.begin(), xv.shape.end());
  if (dims.empty()) dims = {1};
  const memory::desc dst =
      dims.size() == 4 ? memory::desc(dims, dt, memory::format_tag::acdb)
                       : PlainDims(dims, dt);
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
}  // namespace shoal
