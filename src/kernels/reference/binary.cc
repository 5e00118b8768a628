// Add, Sub, Mul, Div, Pow and Where with numpy broadcasting.
#include <cmath>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// Calls f(element of each input) for every output element; f gets a
// pointer to the inputs' values at that element.
template <typename F>
Status BroadcastN(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out, F f) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& ys = out[0].shape;
  std::vector<std::vector<int64_t>> strides;
  for (const auto& v : in)
    strides.push_back(ref::BroadcastStrides(v.shape, ys));
  std::vector<int64_t> idx;
  std::vector<float> vals(in.size());
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, ys, &idx);
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t at = 0;
      for (size_t d = 0; d < ys.size(); ++d) at += idx[d] * strides[k][d];
      vals[k] = in[k].data[at];
    }
    out[0].data[i] = f(vals.data());
  }
  return Status::Ok();
}

template <typename F>
Status Broadcast(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out, F f) {
  return BroadcastN(node, in, out,
                    [&](const float* v) { return f(v[0], v[1]); });
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

Status PowKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Broadcast(node, in, out, [](float a, float b) {
    return static_cast<float>(std::pow(static_cast<double>(a), b));
  });
}
Status WhereKernel(const Node& node, const std::vector<ConstView>& in,
                   const std::vector<MutView>& out) {
  return BroadcastN(node, in, out,
                    [](const float* v) { return v[0] != 0.f ? v[1] : v[2]; });
}

SHOAL_REGISTER_REF_KERNEL("Pow", PowKernel);
SHOAL_REGISTER_REF_KERNEL("Where", WhereKernel);
SHOAL_REGISTER_REF_KERNEL("Add", AddKernel);
SHOAL_REGISTER_REF_KERNEL("Sub", SubKernel);
SHOAL_REGISTER_REF_KERNEL("Mul", MulKernel);
SHOAL_REGISTER_REF_KERNEL("Div", DivKernel);

}  // namespace
}  // namespace shoal
