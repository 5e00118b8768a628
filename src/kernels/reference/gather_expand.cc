// Gather with constant indices and Expand (numpy broadcast to a shape).
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// Output = [outer, indices, inner]: copies `inner` runs of the input.
Status GatherKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  const int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", 0),
                                     static_cast<int64_t>(xs.size()));
  const std::vector<int64_t> idx = node.attrs.GetInts("indices");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= xs[i];
  for (size_t i = axis + 1; i < xs.size(); ++i) inner *= xs[i];
  const int64_t n = xs[axis];
  float* y = out[0].data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : idx) {
      const int64_t j = k < 0 ? k + n : k;
      const float* src = in[0].data + (o * n + j) * inner;
      y = std::copy(src, src + inner, y);
    }
  }
  return Status::Ok();
}

Status ExpandKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& ys = out[0].shape;
  const std::vector<int64_t> s = ref::BroadcastStrides(in[0].shape, ys);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, ys, &idx);
    int64_t at = 0;
    for (size_t d = 0; d < ys.size(); ++d) at += idx[d] * s[d];
    out[0].data[i] = in[0].data[at];
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Gather", GatherKernel);
SHOAL_REGISTER_REF_KERNEL("Expand", ExpandKernel);

}  // namespace
}  // namespace shoal
