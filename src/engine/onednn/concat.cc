// Concat on oneDNN: inputs in their producers' layouts, output layout chosen
// by the primitive.
#include "engine/onednn/primitive_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildConcat(ExecBuilder& b, const Node& n) {
  std::vector<int> xs;
  std::vector<memory::desc> mds;
  for (const auto& in : n.inputs) {
    int v = b.ValueOf(in);
    if (v < 0) return false;  // a weight operand: reference kernel
    xs.push_back(v);
    mds.push_back(b.value(v).md);
  }
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const int axis = static_cast<int>(
      NormalizeAxis(n.attrs.GetInt("axis"), static_cast<int64_t>(ys.size())));
  memory::desc dst_md(memory::dims(ys.begin(), ys.end()),
                      memory::data_type::f32, memory::format_tag::any);
  auto pd_or = TryDnnl([&] {
    return dnnl::concat::primitive_desc(dst_md, axis, mds, b.engine(),
                                        ScratchpadAttr());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::concat(pd));
  for (size_t i = 0; i < xs.size(); ++i)
    step->AddInput(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), xs[i], mds[i]);
  int y = b.NewValue(n.outputs[0], ys, pd.dst_desc());
  step->AddOutput(DNNL_ARG_DST, y, pd.dst_desc());
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Concat", BuildConcat);

}  // namespace
}  // namespace shoal
