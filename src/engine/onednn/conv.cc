// Conv on oneDNN: layouts chosen by the primitive (format_tag::any), weights
// reordered once, bias and a following activation fused (post-op).
#include "engine/onednn/primitive_step.h"
#include "ops/window.h"

namespace shoal {
namespace {

StatusOr<bool> BuildConv(ExecBuilder& b, const Node& n) {
  const Graph& g = b.graph();
  const TensorInfo* w_info = g.FindTensor(n.inputs[1]);
  if (!w_info->is_weight() || !b.Weight(n.inputs[1])) return false;
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  if (has_bias && !b.Weight(n.inputs[2])) return false;

  const int x = b.ValueOf(n.inputs[0]);
  const Shape xs = b.value(x).shape;
  const Shape& ws = w_info->shape;
  const Shape& ys = g.FindTensor(n.outputs[0])->shape;
  std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
  ASSIGN_OR_RETURN(
      WindowGeometry geo,
      ResolveWindow(n, spatial,
                    std::vector<int64_t>(ws.begin() + 2, ws.end())));
  const int64_t group = n.attrs.GetInt("group", 1);

  memory::dims src(xs.begin(), xs.end()), dst(ys.begin(), ys.end());
  memory::dims wdims;
  if (group > 1)
    wdims = {group, ws[0] / group};
  else
    wdims = {ws[0]};
  wdims.insert(wdims.end(), ws.begin() + 1, ws.end());
  memory::dims strides(geo.stride.begin(), geo.stride.end());
  memory::dims dil, pad_l(geo.pad_begin.begin(), geo.pad_begin.end());
  memory::dims pad_r(geo.pad_end.begin(), geo.pad_end.end());
  for (int64_t d : geo.dilation) dil.push_back(d - 1);  // oneDNN counts from 0
  // The right padding oneDNN needs so its output size equals ours.
  for (size_t i = 0; i < spatial.size(); ++i) {
    int64_t span = (geo.kernel[i] - 1) * geo.dilation[i] + 1;
    pad_r[i] = (ys[2 + i] - 1) * geo.stride[i] + span - spatial[i] - pad_l[i];
  }

  const auto any = memory::format_tag::any;
  const auto f32 = memory::data_type::f32;
  memory::desc src_md(src, f32, any), w_md(wdims, f32, any),
      dst_md(dst, f32, any);
  memory::desc b_md = has_bias
                          ? memory::desc({ws[0]}, f32, memory::format_tag::a)
                          : memory::desc();

  dnnl::primitive_attr attr = ScratchpadAttr();
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        src_md, w_md, b_md, dst_md, strides, dil, pad_l, pad_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;

  auto step = std::make_unique<PrimitiveStep>(&b.engine(),
                                              dnnl::convolution_forward(pd));
  step->AddInput(DNNL_ARG_SRC, b.InLayout(x, pd.src_desc()), pd.src_desc());
  step->AddFixed(
      DNNL_ARG_WEIGHTS,
      ReorderedWeights(b.engine(), b.Weight(n.inputs[1])->data.data(),
                       PlainDims(wdims), pd.weights_desc()));
  if (has_bias) {
    step->AddFixed(
        DNNL_ARG_BIAS,
        ReorderedWeights(b.engine(), b.Weight(n.inputs[2])->data.data(),
                         PlainDims({ws[0]}), pd.bias_desc()));
  }
  AddFusedOutputStep(b, n, act, std::move(step), ys, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Conv", BuildConv);

}  // namespace
}  // namespace shoal
