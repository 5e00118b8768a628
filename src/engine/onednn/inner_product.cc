// Gemm with constant weights (a fully connected layer) as oneDNN's
// inner_product, with a following activation fused; a quantized one
// (int8_pattern.h) as an int8 inner product.
#include "engine/onednn/int8_pattern.h"
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildInnerProduct(ExecBuilder& b, const Node& n) {
  const Graph& g = b.graph();
  if (n.attrs.GetInt("transA", 0) != 0 ||
      n.attrs.GetFloat("alpha", 1.f) != 1.f ||
      n.attrs.GetFloat("beta", 1.f) != 1.f) {
    return false;
  }
  const std::optional<Int8Layer> q8 = MatchInt8Layer(b, n);
  const std::string& w_name = q8 ? q8->weight_dequant->inputs[0] : n.inputs[1];
  const TensorInfo* w_info = g.FindTensor(w_name);
  if (!w_info->is_weight() || !b.Weight(w_name)) return false;
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  const int64_t out_features = g.FindTensor(n.outputs[0])->shape[1];
  if (has_bias) {
    const TensorInfo* c = g.FindTensor(n.inputs[2]);
    if (!c->is_weight() || !b.Weight(n.inputs[2]) ||
        NumElements(c->shape) != out_features)
      return false;
  }
  int x = b.ValueOf(n.inputs[0]);
  if (q8) {
    ASSIGN_OR_RETURN(x, Int8Input(b, *q8, n));
  }
  const Shape xs = b.value(x).shape;
  const bool trans_b = n.attrs.GetInt("transB", 0) != 0;
  const int64_t m = xs[0], k = xs[1];

  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  memory::desc src_md({m, k}, q8 ? Int8ComputeSourceType(*q8) : f32, any),
      w_md({out_features, k}, q8 ? Int8WeightType(*q8) : f32, any),
      dst_md({m, out_features}, f32, any);
  memory::desc b_md =
      has_bias ? memory::desc({out_features}, f32, memory::format_tag::a)
               : memory::desc();
  dnnl::primitive_attr attr = ScratchpadAttr();
  Int8Scales out_scales;
  if (q8) out_scales = SetInt8OutputScales(b, *q8, out_features, 2, 1, &attr);
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::inner_product_forward::desc(
        dnnl::prop_kind::forward_inference, src_md, w_md, b_md, dst_md);
    return dnnl::inner_product_forward::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) {
    // MarkInt8Fusions took the DQs: there is no f32 path left.
    if (q8) return pd_or.status().WithContext("int8 gemm '" + n.name + "'");
    return false;
  }
  auto pd = *pd_or;
  // B is [N, K] with transB, else [K, N]: describe it as [N, K] either way.
  memory::desc w_plain =
      trans_b ? PlainDims({out_features, k})
              : memory::desc({out_features, k}, f32, {1, out_features});
  auto step = std::make_unique<PrimitiveStep>(&b.engine(),
                                              dnnl::inner_product_forward(pd));
  step->AddInput(DNNL_ARG_SRC, b.InLayout(x, pd.src_desc()), pd.src_desc());
  step->AddFixed(DNNL_ARG_WEIGHTS,
                 WeightInLayout(b, w_name, w_plain, pd.weights_desc()));
  if (has_bias && !q8) {
    step->AddFixed(DNNL_ARG_BIAS,
                   WeightInLayout(b, n.inputs[2], PlainDims({out_features}),
                                  pd.bias_desc()));
  } else if (has_bias) {  // rescaled for the int8 output: this layer's own
    const std::vector<float> bias =
        Int8Bias(b.Weight(n.inputs[2])->data, out_scales.scales);
    step->AddFixed(DNNL_ARG_BIAS,
                   ReorderedWeights(b.engine(), bias.data(),
                                    PlainDims({out_features}), pd.bias_desc()));
  }
  if (q8) FinishInt8Step(out_scales, step.get());
  const Shape ys = {m, out_features};
  AddFusedOutputStep(b, n, act, std::move(step), ys, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Gemm", BuildInnerProduct);

}  // namespace
}  // namespace shoal
