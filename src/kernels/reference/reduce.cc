// ReduceMean and ReduceL2 over `axes` (all when empty), summed in double.
#include <cmath>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

Status ReduceKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const bool l2 = node.op == "ReduceL2";
  const Shape& xs = in[0].shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes = node.attrs.GetInts("axes");
  Shape kept = xs;  // the output shape with keepdims=1
  if (axes.empty()) kept.assign(rank, 1);
  for (int64_t a : axes) kept[NormalizeAxis(a, rank)] = 1;
  const int64_t count =
      NumElements(kept) > 0 ? in[0].size() / NumElements(kept) : 0;
  // The output is laid out as `kept` whether or not keepdims drops the unit
  // axes, so reduced axes simply get stride 0.
  const std::vector<int64_t> to_out = ref::BroadcastStrides(kept, xs);
  std::vector<double> sum(out[0].size(), 0.0);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < in[0].size(); ++i) {
    ref::Unflatten(i, xs, &idx);
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) o += idx[d] * to_out[d];
    const double v = in[0].data[i];
    sum[o] += l2 ? v * v : v;
  }
  for (size_t o = 0; o < sum.size(); ++o) {
    out[0].data[o] =
        static_cast<float>(l2 ? std::sqrt(sum[o]) : sum[o] / count);
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("ReduceMean", ReduceKernel);
SHOAL_REGISTER_REF_KERNEL("ReduceL2", ReduceKernel);

}  // namespace
}  // namespace shoal
