// MatMul on oneDNN's matmul primitive: batched, batch axes broadcast (the
// shorter operand gets leading unit axes), in plain layout. Attention's
// products of two activations run here; 1-D operands are the reference
// kernel's.
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

memory::dims Padded(const Shape& s, size_t rank) {
  memory::dims d(rank - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

StatusOr<bool> BuildMatMul(ExecBuilder& b, const Node& n) {
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
      const Tensor* w = b.Weight(n.inputs[i]);
      step->AddFixed(args[i], ReorderedWeights(b.engine(), w->data.data(),
                                               *mds[i], *mds[i]));
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
