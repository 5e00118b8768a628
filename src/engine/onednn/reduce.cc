// ReduceMean and ReduceL2 on oneDNN's reduction primitive (mean; the L2
// norm as norm_lp_sum with p = 2), in plain layout: the output is seen with
// the reduced axes kept as 1 (the same bytes as without).
#include "engine/onednn/primitive_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildReduceMean(ExecBuilder& b, const Node& n) {
  const int xid = b.ValueOf(n.inputs[0]);
  if (xid < 0) return false;
  const int x = b.Plain(xid);
  const Value xv = b.value(x);
  const int64_t r = static_cast<int64_t>(xv.shape.size());
  memory::dims kept(xv.shape.begin(), xv.shape.end());
  const std::vector<int64_t> axes = n.attrs.GetInts("axes");
  if (axes.empty()) kept.assign(r, 1);
  for (int64_t a : axes) kept[NormalizeAxis(a, r)] = 1;
  const memory::desc ymd = PlainDims(kept);
  auto pd_or = TryDnnl([&] {
    const bool l2 = n.op == "ReduceL2";
    auto d = dnnl::reduction::desc(l2 ? dnnl::algorithm::reduction_norm_lp_sum
                                      : dnnl::algorithm::reduction_mean,
                                   xv.md, ymd, l2 ? 2.f : 0.f, 0.f);
    return dnnl::reduction::primitive_desc(d, ScratchpadAttr(), b.engine());
  });
  if (!pd_or.ok()) return false;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::reduction(*pd_or));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  const Shape& ys = b.graph().tensors.at(n.outputs[0]).shape;
  const int y = b.NewValue(n.outputs[0], ys, PlainDesc(ys));
  step->AddOutput(DNNL_ARG_DST, y, ymd);
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("ReduceMean", BuildReduceMean);
SHOAL_REGISTER_ONEDNN_KERNEL("ReduceL2", BuildReduceMean);

}  // namespace
}  // namespace shoal
