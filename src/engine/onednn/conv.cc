// Conv on oneDNN: layouts chosen by the primitive (format_tag::any), weights
// reordered once, bias and a following activation fused (post-op). A
// quantized conv (int8_pattern.h) runs as an int8 convolution.
#include "engine/onednn/int8_pattern.h"
#include "engine/onednn/primitive_step.h"
#include "ops/window.h"

namespace shoal {
namespace {

StatusOr<bool> BuildConv(ExecBuilder& b, const Node& n) {
  const Graph& g = b.graph();
  const std::optional<Int8Layer> q8 = MatchInt8Layer(b, n);
  const std::string& w_name = q8 ? q8->weight_dequant->inputs[0] : n.inputs[1];
  const TensorInfo* w_info = g.FindTensor(w_name);
  if (!w_info->is_weight() || !b.Weight(w_name)) return false;
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  if (has_bias && !b.Weight(n.inputs[2])) return false;

  int x = b.ValueOf(n.inputs[0]);
  if (q8) {
    ASSIGN_OR_RETURN(x, Int8Input(b, *q8, n));
  }
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
  memory::desc src_md(src, q8 ? Int8ComputeSourceType(*q8) : f32, any),
      w_md(wdims, q8 ? Int8WeightType(*q8) : f32, any), dst_md(dst, f32, any);
  memory::desc b_md = has_bias
                          ? memory::desc({ws[0]}, f32, memory::format_tag::a)
                          : memory::desc();

  dnnl::primitive_attr attr = ScratchpadAttr();
  Int8Scales out_scales;
  if (q8)
    out_scales = SetInt8OutputScales(b, *q8, ws[0],
                                     static_cast<int>(dst.size()), 1, &attr);
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        src_md, w_md, b_md, dst_md, strides, dil, pad_l, pad_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) {
    // MarkInt8Fusions took the DQs: there is no f32 path left.
    if (q8) return pd_or.status().WithContext("int8 conv '" + n.name + "'");
    return false;
  }
  auto pd = *pd_or;

  auto step = std::make_unique<PrimitiveStep>(&b.engine(),
                                              dnnl::convolution_forward(pd));
  step->AddInput(DNNL_ARG_SRC, b.InLayout(x, pd.src_desc()), pd.src_desc());
  step->AddFixed(DNNL_ARG_WEIGHTS, WeightInLayout(b, w_name, PlainDims(wdims),
                                                  pd.weights_desc()));
  if (has_bias && !q8) {
    step->AddFixed(
        DNNL_ARG_BIAS,
        WeightInLayout(b, n.inputs[2], PlainDims({ws[0]}), pd.bias_desc()));
  } else if (has_bias) {  // rescaled for the int8 output: this layer's own
    const std::vector<float> bias =
        Int8Bias(b.Weight(n.inputs[2])->data, out_scales.scales);
    step->AddFixed(DNNL_ARG_BIAS,
                   ReorderedWeights(b.engine(), bias.data(), PlainDims({ws[0]}),
                                    pd.bias_desc()));
  }
  if (q8) FinishInt8Step(out_scales, step.get());
  AddFusedOutputStep(b, n, act, std::move(step), ys, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Conv", BuildConv);

}  // namespace
}  // namespace shoal
