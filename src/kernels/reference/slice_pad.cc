// Slice (negative indices and steps) and Pad (constant, reflect, edge).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// First index a Slice reads along an axis of extent `dim`, clamped as ONNX
// clamps it (the extent itself comes from SliceExtent in shape inference).
int64_t SliceStart(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0
             ? std::clamp<int64_t>(start, 0, dim)
             : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
}

Status SliceKernel(const Node& node, const std::vector<ConstView>& in,
                   const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  const std::vector<int64_t> starts = node.attrs.GetInts("starts");
  std::vector<int64_t> axes = node.attrs.GetInts("axes");
  std::vector<int64_t> steps = node.attrs.GetInts("steps");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  // Untouched axes read from 0 with step 1.
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = NormalizeAxis(axes[i], rank);
    if (seen[a]) return ref::KernelError(node, "axis repeated in axes");
    seen[a] = true;
    first[a] = SliceStart(xs[a], starts[i], steps[i]);
    step[a] = steps[i];
  }
  const std::vector<int64_t> xstride = Strides(xs);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, out[0].shape, &idx);
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      src += (first[d] + idx[d] * step[d]) * xstride[d];
    }
    out[0].data[i] = in[0].data[src];
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Slice", SliceKernel);

enum class PadMode { kConstant, kReflect, kEdge };

// Maps a position outside [0, dim) back inside it; returns -1 for constant
// padding. Reflection repeats for pads wider than the axis (numpy.pad).
int64_t PadSource(int64_t pos, int64_t dim, PadMode mode) {
  if (pos >= 0 && pos < dim) return pos;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return std::clamp<int64_t>(pos, 0, dim - 1);
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((pos % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

// pads: [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; negative pads crop.
Status PadKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  const std::vector<int64_t> pads = node.attrs.GetInts("pads");
  const std::string m = node.attrs.GetString("mode", "constant");
  const PadMode mode = m == "reflect" ? PadMode::kReflect
                       : m == "edge"  ? PadMode::kEdge
                                      : PadMode::kConstant;
  const float value = node.attrs.GetFloat("value", 0.f);
  if (mode != PadMode::kConstant && in[0].size() == 0 && out[0].size() > 0) {
    return ref::KernelError(node, "cannot " + m + "-pad an empty tensor");
  }
  const std::vector<int64_t> xstride = Strides(xs);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, out[0].shape, &idx);
    int64_t src = 0;
    for (size_t d = 0; d < xs.size() && src >= 0; ++d) {
      const int64_t p = PadSource(idx[d] - pads[d], xs[d], mode);
      src = p < 0 ? -1 : src + p * xstride[d];
    }
    out[0].data[i] = src < 0 ? value : in[0].data[src];
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Pad", PadKernel);

}  // namespace
}  // namespace shoal
