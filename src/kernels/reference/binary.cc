// Add, Sub, Mul, Div with numpy broadcasting.
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

template <typename F>
Status Broadcast(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out, F f) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& ys = out[0].shape;
  const std::vector<int64_t> sa = ref::BroadcastStrides(in[0].shape, ys);
  const std::vector<int64_t> sb = ref::BroadcastStrides(in[1].shape, ys);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, ys, &idx);
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < ys.size(); ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    out[0].data[i] = f(in[0].data[ia], in[1].data[ib]);
  }
  return Status::Ok();
}

Status AddKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Broadcast(node, in, out, [](float a, float b) { return a + b; });
}
Status SubKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Broadcast(node, in, out, [](float a, float b) { return a - b; });
}
Status MulKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Broadcast(node, in, out, [](float a, float b) { return a * b; });
}
Status DivKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Broadcast(node, in, out, [](float a, float b) { return a / b; });
}

SHOAL_REGISTER_REF_KERNEL("Add", AddKernel);
SHOAL_REGISTER_REF_KERNEL("Sub", SubKernel);
SHOAL_REGISTER_REF_KERNEL("Mul", MulKernel);
SHOAL_REGISTER_REF_KERNEL("Div", DivKernel);

}  // namespace
}  // namespace shoal
