#include "kernels/reference/int8_kernels.h"

#include <cmath>
#include <iostream>
#include <limits>

#include "kernels/reference/ref_util.h"

namespace shoal {

Int8KernelRegistry& Int8KernelRegistry::Global() {
  static Int8KernelRegistry* r = new Int8KernelRegistry();
  return *r;
}

int Int8KernelRegistry::Register(const std::string& op, Int8KernelFn fn) {
  if (!kernels_.emplace(op, fn).second) {
    std::cerr << "int8 kernel for '" << op << "' registered twice" << std::endl;
    std::abort();  // programmer error
  }
  return static_cast<int>(kernels_.size());
}

Int8KernelFn Int8KernelRegistry::Find(const std::string& op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : it->second;
}

int64_t Int8OutputChannelAxis(const Node& node, size_t rank) {
  if (node.op == "Conv") return 0;
  if (node.op == "Gemm") return node.attrs.GetInt("transB", 0) != 0 ? 0 : 1;
  if (node.op == "MatMul" && rank >= 2) return static_cast<int64_t>(rank) - 1;
  return -1;
}

namespace ref {

StatusOr<std::vector<int32_t>> CenteredInt8(const Node& node, int input,
                                            const ConstView& v,
                                            const QuantParams& p) {
  int64_t channels = 1, inner = 1;
  if (!p.per_tensor()) {
    channels = v.shape[p.axis];
    for (size_t i = p.axis + 1; i < v.shape.size(); ++i) inner *= v.shape[i];
  }
  std::vector<int32_t> out(v.size());
  for (int64_t i = 0; i < v.size(); ++i) {
    const float q = v.data[i];
    // The runtime keeps int8 values as exact integers; anything else is a
    // bug upstream (a DQ fed f32 data), not something to round away.
    if (!(q >= kInt8Min && q <= kInt8Max) || q != std::nearbyint(q)) {
      return KernelError(node, "input " + std::to_string(input) + " element " +
                                   std::to_string(i) + " is " +
                                   std::to_string(q) +
                                   ", not an int8 value (an integer in "
                                   "[-128, 127])");
    }
    out[i] = static_cast<int32_t>(q) - p.zero_point[(i / inner) % channels];
  }
  return out;
}

Status CheckInt8Params(const Node& node, const QuantParams& x,
                       const QuantParams& w, const Shape& w_shape) {
  if (!x.per_tensor()) {
    return KernelError(node, "the data input has " +
                                 std::to_string(x.scale.size()) +
                                 " scales; int8 kernels take one");
  }
  if (!w.per_tensor() &&
      w.axis != Int8OutputChannelAxis(node, w_shape.size())) {
    return KernelError(node, "the weight is scaled along axis " +
                                 std::to_string(w.axis) +
                                 ", not its output channels");
  }
  return Status::Ok();
}

Status CheckInt32(const Node& node, int64_t acc) {
  if (acc < std::numeric_limits<int32_t>::min() ||
      acc > std::numeric_limits<int32_t>::max()) {
    return KernelError(
        node, "an integer sum (" + std::to_string(acc) + ") overflows int32");
  }
  return Status::Ok();
}

}  // namespace ref
}  // namespace shoal
