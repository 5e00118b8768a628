// MatMul on oneDNN's matmul primitive: batched, batch axes broadcast (the
// shorter operand gets leading unit axes), in plain layout. Attention's
// products of two activations run here; 1-D operands are the reference
// kernel's. A quantized MatMul by a constant weight runs as an int8 matmul.
#include <string>

#include "engine/onednn/int8_pattern.h"
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

memory::dims Padded(const Shape& s, size_t rank) {
  memory::dims d(rank - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

// A quantized MatMul by a constant [K, N] weight (int8_pattern.h): u8 / s8
// A, s8 weights broadcast over A's batch axes, s32 sums scaled per column
// of N to f32 (or the same integers in f32, Int8Layer::f32_sums).
StatusOr<bool> BuildInt8MatMul(ExecBuilder& b, const Node& n,
                               const Int8Layer& q8) {
  const Graph& g = b.graph();
  const std::string& w_name = q8.weight_dequant->inputs[0];
  const Shape& as = g.tensors.at(n.inputs[0]).shape;
  const Shape& ws = g.tensors.at(w_name).shape;
  const Shape& ys = g.tensors.at(n.outputs[0]).shape;
  ASSIGN_OR_RETURN(const int x, Int8Input(b, q8, n));
  const memory::desc amd =
      PlainDims(Padded(as, ys.size()), Int8ComputeSourceType(q8));
  const memory::desc wmd(Padded(ws, ys.size()), Int8WeightType(q8),
                         memory::format_tag::any);
  const memory::desc ymd = PlainDims(Padded(ys, ys.size()));
  dnnl::primitive_attr attr = ScratchpadAttr();
  const int rank = static_cast<int>(ys.size());
  Int8Scales scales = SetInt8OutputScales(b, q8, ws[1], rank, rank - 1, &attr);
  auto pd = TryDnnl([&] {
    auto d = dnnl::matmul::desc(amd, wmd, ymd);
    return dnnl::matmul::primitive_desc(d, attr, b.engine());
  });
  // MarkInt8Fusions took the DQs: there is no f32 path left.
  if (!pd.ok()) return pd.status().WithContext("int8 matmul '" + n.name + "'");
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::matmul(*pd));
  step->AddInput(DNNL_ARG_SRC, b.InLayout(x, amd), amd);
  step->AddFixed(DNNL_ARG_WEIGHTS,
                 WeightInLayout(b, w_name, PlainDims(Padded(ws, ys.size())),
                                pd->weights_desc()));
  const int y = b.NewValue(n.outputs[0], ys, PlainDesc(ys));
  step->AddOutput(DNNL_ARG_DST, y, ymd);
  step->label = n.name;
  FinishInt8Step(scales, step.get());
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

StatusOr<bool> BuildMatMul(ExecBuilder& b, const Node& n) {
  if (auto q8 = MatchInt8Layer(b, n)) return BuildInt8MatMul(b, n, *q8);
  const Graph& g = b.graph();
  const Shape& as = g.tensors.at(n.inputs[0]).shape;
  const Shape& bs = g.tensors.at(n.inputs[1]).shape;
  const Shape& ys = g.tensors.at(n.outputs[0]).shape;
  if (as.size() < 2 || bs.size() < 2) return false;
  const memory::desc amd = PlainDims(Padded(as, ys.size()));
  const memory::desc bmd = PlainDims(Padded(bs, ys.size()));
  const memory::desc ymd = PlainDims(Padded(ys, ys.size()));
  // Weights are copied now; a missing one leaves the node to the reference.
  const int args[2] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS};
  const memory::desc* mds[2] = {&amd, &bmd};
  for (int i = 0; i < 2; ++i) {
    if (b.ValueOf(n.inputs[i]) < 0 && b.Weight(n.inputs[i]) == nullptr) {
      return false;
    }
  }
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::matmul::desc(amd, bmd, ymd);
    return dnnl::matmul::primitive_desc(d, ScratchpadAttr(), b.engine());
  });
  if (!pd_or.ok()) return false;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::matmul(*pd_or));
  for (int i = 0; i < 2; ++i) {
    const int v = b.ValueOf(n.inputs[i]);
    if (v >= 0) {
      step->AddInput(args[i], b.Plain(v), *mds[i]);
    } else {
      step->AddFixed(args[i], WeightInLayout(b, n.inputs[i], *mds[i], *mds[i]));
    }
  }
  const int y = b.NewValue(n.outputs[0], ys, PlainDesc(ys));
  step->AddOutput(DNNL_ARG_DST, y, ymd);
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("MatMul", BuildMatMul);

}  // namespace
}  // namespace shoal
