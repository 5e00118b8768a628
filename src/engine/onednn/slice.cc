// Slice with positive steps as one oneDNN reorder: the plain input seen
// through a strided descriptor (the slice's extents, the input's strides
// times the steps, an offset to the first element read) copied into a
// plain output. vit's split of its fused q/k/v projection is three of
// these per layer; negative steps are the reference kernel's.
#include <algorithm>
#include <numeric>

#include "engine/onednn/primitive_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildSlice(ExecBuilder& b, const Node& n) {
  const int xid = b.ValueOf(n.inputs[0]);
  if (xid < 0) return false;
  const std::vector<int64_t> starts = n.attrs.GetInts("starts");
  std::vector<int64_t> axes = n.attrs.GetInts("axes");
  std::vector<int64_t> steps = n.attrs.GetInts("steps");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return false;
  const Shape& xs = b.value(xid).shape;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (rank == 0 || static_cast<int64_t>(ys.size()) != rank) return false;
  if (NumElements(ys) == 0) return false;
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank || steps[i] <= 0) return false;
    const int64_t a = NormalizeAxis(axes[i], rank);
    int64_t s = starts[i];
    if (s < 0) s += xs[a];
    first[a] = std::clamp<int64_t>(s, 0, xs[a]);
    step[a] = steps[i];
  }
  memory::dims strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * xs[d + 1];
  int64_t offset = 0;
  memory::dims view_strides(rank);
  for (int64_t d = 0; d < rank; ++d) {
    // The last element read must lie inside the input.
    if (first[d] + (ys[d] - 1) * step[d] >= xs[d]) return false;
    offset += first[d] * strides[d];
    view_strides[d] = strides[d] * step[d];
  }
  // oneDNN refuses a view whose axis' stride is less than the extent of
  // the axes inside it (x[0::2] of an odd extent: the view's last row ends
  // past the next one's start, though it reads nothing there): the
  // reference kernel takes such a slice.
  auto src_or = TryDnnl([&] {
    return memory::desc(memory::dims(ys.begin(), ys.end()),
                        memory::data_type::f32, view_strides);
  });
  if (!src_or.ok()) return false;
  memory::desc src = *src_or;
  src.data.offset0 = offset;
  const memory::desc dst = PlainDesc(ys);
  auto pd_or = TryDnnl([&] {
    return dnnl::reorder::primitive_desc(b.engine(), src, b.engine(), dst,
                                         ScratchpadAttr());
  });
  if (!pd_or.ok()) return false;
  auto prim =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::reorder(*pd_or));
  prim->AddInput(DNNL_ARG_FROM, b.Plain(xid), src);
  const int y = b.NewValue(n.outputs[0], ys, dst);
  prim->AddOutput(DNNL_ARG_TO, y, dst);
  prim->label = n.name;
  b.AddStep(std::move(prim));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Slice", BuildSlice);

}  // namespace
}  // namespace shoal
