// MaxPool, AveragePool and GlobalAveragePool on oneDNN's pooling, in
// whatever layout the producer left the input.
#include "engine/onednn/primitive_step.h"
#include "ops/window.h"

namespace shoal {
namespace {

StatusOr<bool> AddPooling(ExecBuilder& b, const Node& n, dnnl::algorithm alg,
                          const WindowGeometry& geo) {
  const int x = b.ValueOf(n.inputs[0]);
  const Value xv = b.value(x);
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const size_t r = xv.shape.size() - 2;
  memory::dims kernel(geo.kernel.begin(), geo.kernel.end());
  memory::dims strides(geo.stride.begin(), geo.stride.end());
  memory::dims dil, pad_l(geo.pad_begin.begin(), geo.pad_begin.end()), pad_r(r);
  for (size_t i = 0; i < r; ++i) {
    dil.push_back(geo.dilation[i] - 1);
    int64_t span = (geo.kernel[i] - 1) * geo.dilation[i] + 1;
    // Ceil mode: extend the right padding so the last window is counted.
    pad_r[i] =
        (ys[2 + i] - 1) * geo.stride[i] + span - xv.shape[2 + i] - pad_l[i];
    if (pad_r[i] < 0) pad_r[i] = 0;
    // Averages that include padding would count the extra ceil padding.
    if (alg == dnnl::algorithm::pooling_avg_include_padding &&
        pad_r[i] != geo.pad_end[i]) {
      return false;
    }
  }
  memory::dims dst(ys.begin(), ys.end());
  memory::desc dst_md(dst, memory::data_type::f32, memory::format_tag::any);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                            alg, xv.md, dst_md, strides, kernel,
                                            dil, pad_l, pad_r);
    return dnnl::pooling_v2_forward::primitive_desc(d, ScratchpadAttr(),
                                                    b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(),
                                              dnnl::pooling_v2_forward(pd));
  step->AddInput(DNNL_ARG_SRC, b.InLayout(x, pd.src_desc()), pd.src_desc());
  int y = b.NewValue(n.outputs[0], ys, pd.dst_desc());
  step->AddOutput(DNNL_ARG_DST, y, pd.dst_desc());
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

StatusOr<bool> BuildPool(ExecBuilder& b, const Node& n) {
  const int x = b.ValueOf(n.inputs[0]);
  const Shape xs = b.value(x).shape;
  std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
  ASSIGN_OR_RETURN(WindowGeometry geo, ResolveWindow(n, spatial, {}));
  dnnl::algorithm alg = dnnl::algorithm::pooling_max;
  if (n.op == "AveragePool") {
    alg = n.attrs.GetInt("count_include_pad", 0)
              ? dnnl::algorithm::pooling_avg_include_padding
              : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return AddPooling(b, n, alg, geo);
}

StatusOr<bool> BuildGlobalPool(ExecBuilder& b, const Node& n) {
  const Shape xs = b.value(b.ValueOf(n.inputs[0])).shape;
  WindowGeometry geo;
  const size_t r = xs.size() - 2;
  geo.kernel.assign(xs.begin() + 2, xs.end());
  geo.stride.assign(r, 1);
  geo.dilation.assign(r, 1);
  geo.pad_begin.assign(r, 0);
  geo.pad_end.assign(r, 0);
  return AddPooling(b, n,
                    n.op == "GlobalMaxPool"
                        ? dnnl::algorithm::pooling_max
                        : dnnl::algorithm::pooling_avg_exclude_padding,
                    geo);
}

SHOAL_REGISTER_ONEDNN_KERNEL("MaxPool", BuildPool);
SHOAL_REGISTER_ONEDNN_KERNEL("AveragePool", BuildPool);
SHOAL_REGISTER_ONEDNN_KERNEL("GlobalAveragePool", BuildGlobalPool);
SHOAL_REGISTER_ONEDNN_KERNEL("GlobalMaxPool", BuildGlobalPool);

}  // namespace
}  // namespace shoal
