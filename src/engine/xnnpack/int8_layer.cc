#include "engine/xnnpack/int8_layer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/int8_reference_step.h"
#include "ops/window.h"

namespace shoal {
namespace {

// The int8 weight as XNNPACK's int8 values, or false when an element is
// not an integer in [-128, 127] (the reference kernel then names it).
bool ToInt8(const std::vector<float>& in, std::vector<int8_t>* out) {
  out->resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const float v = in[i];
    if (!(v >= kInt8Min && v <= kInt8Max) || v != std::nearbyint(v))
      return false;
    (*out)[i] = static_cast<int8_t>(v);
  }
  return true;
}

// A Conv: OIHW weights to XNNPACK's [g][O/g][kH][kW][I/g], the geometry
// from the window, as the f32 conv (conv.cc) takes it.
StatusOr<bool> MatchConv(ExecBuilder& b, const Tensor& w, XnnInt8Layer* l) {
  const Node& n = *l->node;
  const Shape& xs = l->in_shape;
  const Shape& ys = l->out_shape;
  const Shape& ws = w.shape;
  if (xs.size() != 4 || ys.size() != 4 || ws.size() != 4) return false;
  ASSIGN_OR_RETURN(WindowGeometry geo,
                   ResolveWindow(n, {xs[2], xs[3]}, {ws[2], ws[3]}));
  const int64_t groups = n.attrs.GetInt("group", 1);
  if (groups <= 0 || ws[0] % groups != 0 || xs[1] != ws[1] * groups)
    return false;
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (geo.kernel[i] - 1) * geo.dilation[i] + 1;
    const int64_t out =
        (xs[2 + i] + geo.pad_begin[i] + geo.pad_end[i] - span) / geo.stride[i] +
        1;
    if (out != ys[2 + i]) return false;
    l->kernel[i] = static_cast<uint32_t>(geo.kernel[i]);
    l->stride[i] = static_cast<uint32_t>(geo.stride[i]);
    l->dilation[i] = static_cast<uint32_t>(geo.dilation[i]);
  }
  l->pad_top = static_cast<uint32_t>(geo.pad_begin[0]);
  l->pad_left = static_cast<uint32_t>(geo.pad_begin[1]);
  l->pad_bottom = static_cast<uint32_t>(geo.pad_end[0]);
  l->pad_right = static_cast<uint32_t>(geo.pad_end[1]);
  l->groups = static_cast<uint32_t>(groups);
  l->group_in = ws[1];
  l->group_out = ws[0] / groups;
  l->conv = true;
  l->batch = xs[0];
  l->in_h = xs[2];
  l->in_w = xs[3];
  std::vector<int8_t> oihw;
  if (!ToInt8(w.data, &oihw)) return false;
  const int64_t o = ws[0], i = ws[1], kh = ws[2], kw = ws[3];
  l->weights.resize(oihw.size());
  for (int64_t a = 0; a < o; ++a)
    for (int64_t c = 0; c < i; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          l->weights[((a * kh + y) * kw + x) * i + c] =
              oihw[((a * i + c) * kh + y) * kw + x];
  (void)b;
  return true;
}

// A Gemm ([M, K] by [N, K] with transB, else [K, N]) or a MatMul by a
// constant [K, N]: weights as [N][K], the rows of x as 1x1 images.
bool MatchFullyConnected(const Tensor& w, XnnInt8Layer* l) {
  const Node& n = *l->node;
  const Shape& xs = l->in_shape;
  const Shape& ys = l->out_shape;
  bool trans_b = false;
  if (n.op == "Gemm") {
    if (n.attrs.GetInt("transA", 0) != 0 ||
        n.attrs.GetFloat("alpha", 1.f) != 1.f ||
        n.attrs.GetFloat("beta", 1.f) != 1.f || xs.size() != 2)
      return false;
    trans_b = n.attrs.GetInt("transB", 0) != 0;
  } else if (n.inputs.size() != 2 || xs.size() < 2) {
    return false;
  }
  if (w.shape.size() != 2 || ys.size() != xs.size()) return false;
  const int64_t k = w.shape[trans_b ? 1 : 0], nout = w.shape[trans_b ? 0 : 1];
  if (k == 0 || xs.back() != k || ys.back() != nout) return false;
  std::vector<int8_t> q;
  if (!ToInt8(w.data, &q)) return false;
  if (trans_b) {
    l->weights = std::move(q);
  } else {
    l->weights.resize(q.size());
    for (int64_t a = 0; a < k; ++a)
      for (int64_t c = 0; c < nout; ++c)
        l->weights[c * k + a] = q[a * nout + c];
  }
  l->conv = false;
  l->batch = static_cast<size_t>(NumElements(xs) / k);
  l->group_in = k;
  l->group_out = nout;
  return true;
}

}  // namespace

std::string XnnInt8Layer::GeometryKey() const {
  // The weight scales are the DQ's attributes, not the weight's data,
  // which is all a weight key names: a qc8 operator packs them, so they
  // are part of what it is (FNV-1a of their bits).
  uint64_t h = 1469598103934665603ull;
  for (float f : w.scale) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    h = (h ^ bits) * 1099511628211ull;
  }
  char s[256];
  std::snprintf(s, sizeof(s),
                "%s k%ux%u s%u,%u d%u,%u p%u,%u,%u,%u g%u %zux%zu x%a,%d "
                "w%016llx",
                conv ? "conv" : "fc", kernel[0], kernel[1], stride[0],
                stride[1], dilation[0], dilation[1], pad_top, pad_right,
                pad_bottom, pad_left, groups, group_in, group_out,
                static_cast<double>(x.scale[0]), x.zero_point[0],
                static_cast<unsigned long long>(h));
  return s;
}

std::optional<XnnInt8Layer> MatchXnnInt8Layer(ExecBuilder& b, const Node& n) {
  auto ref = MatchInt8RefLayer(b, n);
  if (!ref) return std::nullopt;
  XnnInt8Layer l;
  l.node = &n;
  l.w_dequant = ref->w_dequant;
  l.source = ref->x_dequant->inputs[0];
  l.x = ref->x;
  l.w = ref->w;
  // Symmetric weights (what `shoal quantize` makes): XNNPACK's kernels
  // take no weight zero point.
  for (int32_t z : l.w.zero_point)
    if (z != 0) return std::nullopt;
  l.weight_name = ref->w_dequant->inputs[0];
  const Tensor* w = b.Weight(l.weight_name);
  const int src = b.ValueOf(l.source);
  const TensorInfo* y = b.graph().FindTensor(n.outputs[0]);
  if (w == nullptr || src < 0 || y == nullptr) return std::nullopt;
  l.in_shape = b.value(src).shape;
  l.out_shape = y->shape;
  if (n.op == "Conv") {
    auto ok = MatchConv(b, *w, &l);
    if (!ok.ok() || !*ok) return std::nullopt;
  } else if (!MatchFullyConnected(*w, &l)) {
    return std::nullopt;
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* bias = b.Weight(n.inputs[2]);
    if (bias == nullptr || bias->data.size() != l.out_channels())
      return std::nullopt;
    l.bias = bias->data;
    l.bias_name = n.inputs[2];
  }
  if (!l.w.per_tensor() && l.w.scale.size() != l.out_channels())
    return std::nullopt;
  return l;
}

memory::desc S8Desc(const Shape& shape, bool nhwc) {
  const memory::desc f32 = nhwc ? NhwcDesc(shape) : PlainDesc(shape);
  memory::dims dims = f32.dims();
  if (nhwc && !IsPlain(f32, shape))
    return memory::desc(dims, memory::data_type::s8, memory::format_tag::nhwc);
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, memory::data_type::s8, strides);
}

int Int8SourceValue(ExecBuilder& b, const XnnInt8Layer& l) {
  // The builder's reorder converts f32 integers (a reference Q's output, a
  // graph input holding int8 values) exactly, and transposes to NHWC.
  return b.InLayout(b.ValueOf(l.source), S8Desc(l.in_shape, l.conv));
}

StatusOr<bool> BuildXnnInt8Layer(ExecBuilder& b, const Node& n) {
  auto l = MatchXnnInt8Layer(b, n);
  if (!l) return false;
  bool done = false;
  ASSIGN_OR_RETURN(done, BuildQc8Layer(b, *l));
  if (!done) {
    ASSIGN_OR_RETURN(done, BuildF32SumsLayer(b, *l));
  }
  // The int8 weight's plain copy is read by the DQ the layer absorbed,
  // which is never built: release it now that the operator packed it,
  // unless another layer reads that DQ too.
  if (done && b.SoleConsumer(l->w_dequant->outputs[0]) == &n)
    b.ReleaseWeights(*l->w_dequant);
  return done;
}

}  // namespace shoal
