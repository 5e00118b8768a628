// LayerNormalization on oneDNN: the input seen as [rows, normalised size]
// (oneDNN normalises the last axis), Scale and B expanded to that size.
#include "engine/onednn/primitive_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// `p` broadcast to `inner` (its trailing axes), as a plain vector.
std::vector<float> Expanded(const Tensor& p, const Shape& inner) {
  const int64_t n = NumElements(inner);
  std::vector<float> out(n);
  if (static_cast<int64_t>(p.data.size()) == n) return p.data;
  // Row-major index arithmetic with the parameter's unit axes held at 0.
  const size_t off = inner.size() - p.shape.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, at = 0, stride = 1;
    for (size_t d = inner.size(); d-- > 0;) {
      const int64_t k = rest % inner[d];
      rest /= inner[d];
      if (d >= off) {
        const int64_t pd = p.shape[d - off];
        if (pd != 1) at += k * stride;
        stride *= pd;
      }
    }
    out[i] = p.data[at];
  }
  return out;
}

StatusOr<bool> BuildLayerNorm(ExecBuilder& b, const Node& n) {
  const Tensor* scale = b.Weight(n.inputs[1]);
  const bool has_b = n.inputs.size() > 2 && !n.inputs[2].empty();
  const Tensor* shift = has_b ? b.Weight(n.inputs[2]) : nullptr;
  if (scale == nullptr || (has_b && shift == nullptr)) return false;
  const int x = b.Plain(b.ValueOf(n.inputs[0]));
  const Value xv = b.value(x);
  const int64_t r = static_cast<int64_t>(xv.shape.size());
  const int64_t axis = NormalizeAxis(n.attrs.GetInt("axis", -1), r);
  const Shape inner(xv.shape.begin() + axis, xv.shape.end());
  const int64_t cols = NumElements(inner);
  const int64_t rows = cols > 0 ? NumElements(xv.shape) / cols : 0;
  const memory::desc md2 = PlainDims({rows, cols});
  auto flags = dnnl::normalization_flags::use_scale;
  if (has_b) flags = flags | dnnl::normalization_flags::use_shift;
  const float eps = n.attrs.GetFloat("epsilon", 1e-5f);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::layer_normalization_forward::desc(
        dnnl::prop_kind::forward_inference, md2, eps, flags);
    return dnnl::layer_normalization_forward::primitive_desc(
        d, ScratchpadAttr(), b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(
      &b.engine(), dnnl::layer_normalization_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, md2);
  const memory::desc vec = PlainDims({cols});
  const std::vector<float> s = Expanded(*scale, inner);
  step->AddFixed(DNNL_ARG_SCALE,
                 ReorderedWeights(b.engine(), s.data(), vec, vec));
  if (has_b) {
    const std::vector<float> t = Expanded(*shift, inner);
    step->AddFixed(DNNL_ARG_SHIFT,
                   ReorderedWeights(b.engine(), t.data(), vec, vec));
  }
  // The output value has the node's shape; the primitive sees it as 2-D.
  const int y = b.NewValue(n.outputs[0], xv.shape, PlainDesc(xv.shape));
  step->AddOutput(DNNL_ARG_DST, y, md2);
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("LayerNormalization", BuildLayerNorm);

}  // namespace
}  // namespace shoal
