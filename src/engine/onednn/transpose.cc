// Transpose as one oneDNN reorder: the input's memory descriptor, blocked
// or plain, seen with its axes permuted, copied into a plain output. A
// blocked producer (convnext's depthwise conv before its channels-last
// LayerNorm) needs no reorder to plain first.
#include <numeric>

#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildTranspose(ExecBuilder& b, const Node& n) {
  const int x = b.ValueOf(n.inputs[0]);
  if (x < 0) return false;
  const Value xv = b.value(x);
  const int rank = static_cast<int>(xv.shape.size());
  if (rank == 0) return false;
  std::vector<int64_t> perm = n.attrs.GetInts("perm");
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  if (static_cast<int>(perm.size()) != rank) return false;
  // ONNX: output axis i is input axis perm[i]; oneDNN's permutation maps
  // each input axis to its output axis.
  std::vector<int> to(rank, -1);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || to[perm[i]] != -1) return false;
    to[perm[i]] = i;
  }
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const memory::desc dst = PlainDesc(ys);
  auto pd_or = TryDnnl([&] {
    const memory::desc src = xv.md.permute_axes(to);
    return std::make_pair(
        src, dnnl::reorder::primitive_desc(b.engine(), src, b.engine(), dst,
                                           ScratchpadAttr()));
  });
  if (!pd_or.ok()) return false;
  auto [src, pd] = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::reorder(pd));
  step->AddInput(DNNL_ARG_FROM, x, src);
  const int y = b.NewValue(n.outputs[0], ys, dst);
  step->AddOutput(DNNL_ARG_TO, y, dst);
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Transpose", BuildTranspose);

}  // namespace
}  // namespace shoal
