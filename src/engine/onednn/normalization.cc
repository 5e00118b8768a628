// BatchNormalization (inference: global statistics) and LRN on oneDNN.
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildBatchNorm(ExecBuilder& b, const Node& n) {
  for (int i = 1; i < 5; ++i)
    if (!b.Weight(n.inputs[i])) return false;
  const int x = b.ValueOf(n.inputs[0]);
  const Value xv = b.value(x);
  const int64_t c = xv.shape[1];
  const float eps = n.attrs.GetFloat("epsilon", 1e-5f);
  auto flags = dnnl::normalization_flags::use_global_stats |
               dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::primitive_attr attr = ScratchpadAttr();
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::batch_normalization_forward::desc(
        dnnl::prop_kind::forward_inference, xv.md, eps, flags);
    return dnnl::batch_normalization_forward::primitive_desc(d, attr,
                                                             b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(
      &b.engine(), dnnl::batch_normalization_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  const memory::desc vec = PlainDims({c});
  const int args[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN,
                      DNNL_ARG_VARIANCE};
  for (int i = 0; i < 4; ++i) {
    step->AddFixed(
        args[i],
        ReorderedWeights(b.engine(), b.Weight(n.inputs[i + 1])->data.data(),
                         vec, vec));
  }
  AddFusedOutputStep(b, n, act, std::move(step), xv.shape, pd.dst_desc());
  return true;
}

StatusOr<bool> BuildLrn(ExecBuilder& b, const Node& n) {
  const int64_t size = n.attrs.GetInt("size");
  if (size % 2 == 0)
    return false;  // ONNX's window is asymmetric for even sizes
  const int x = b.ValueOf(n.inputs[0]);
  const Value xv = b.value(x);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::lrn_forward::desc(
        dnnl::prop_kind::forward_inference,
        dnnl::algorithm::lrn_across_channels, xv.md, size,
        n.attrs.GetFloat("alpha", 1e-4f), n.attrs.GetFloat("beta", 0.75f),
        n.attrs.GetFloat("bias", 1.f));
    return dnnl::lrn_forward::primitive_desc(d, ScratchpadAttr(), b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::lrn_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  int y = b.NewValue(n.outputs[0], xv.shape, pd.dst_desc());
  step->AddOutput(DNNL_ARG_DST, y, pd.dst_desc());
  if (pd.workspace_desc().get_size() > 0)
    step->AddFixed(DNNL_ARG_WORKSPACE, memory(pd.workspace_desc(), b.engine()));
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("BatchNormalization", BuildBatchNorm);
SHOAL_REGISTER_ONEDNN_KERNEL("LRN", BuildLrn);

}  // namespace
}  // namespace shoal
