// Integer reference kernels for quantized layers, the oracle of int8
// execution: a Conv, Gemm or MatMul whose data input and weight are both
// DequantizeLinear outputs of int8 values runs on the int8 values
// themselves, as ONNX's ConvInteger / MatMulInteger followed by one rescale:
//   acc  = sum (x_q - z_x) * (w_q - z_w[c])      exact, must fit int32
//   y    = acc * (s_x * s_w[c]) + bias[c]        rounded once to f32
// where c is the output channel. s_x * s_w[c] is the f32 product (the output
// scale an int8 primitive is given); the product with the exact sum and the
// bias is formed in double, so y is the exact result rounded once but for
// that scale's own rounding. Loops, not speed.
#ifndef SHOAL_KERNELS_REFERENCE_INT8_KERNELS_H_
#define SHOAL_KERNELS_REFERENCE_INT8_KERNELS_H_

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/quantization.h"
#include "kernels/tensor_view.h"
#include "util/status.h"

namespace shoal {

// `in` holds the layer's inputs in node order, the first two the int8 values
// (exact integers in [-128, 127] held in f32) that the DQs of the data input
// and the weight read; `x` and `w` are those DQs' parameters: x per tensor,
// w per tensor or per output channel. Any int8 zero points. Outputs f32.
using Int8KernelFn = Status (*)(const Node& node,
                                const std::vector<ConstView>& in,
                                const QuantParams& x, const QuantParams& w,
                                const std::vector<MutView>& out);

// The int8 kernels by the op of the layer they run (Conv, Gemm, MatMul).
class Int8KernelRegistry {
 public:
  static Int8KernelRegistry& Global();
  int Register(const std::string& op, Int8KernelFn fn);
  Int8KernelFn Find(const std::string& op) const;

 private:
  std::map<std::string, Int8KernelFn> kernels_;
};

#define SHOAL_REGISTER_INT8_KERNEL(op, fn)                                    \
  static int SHOAL_CONCAT(shoal_int8_kernel_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::Int8KernelRegistry::Global().Register(op, fn)

// The axis of `op`'s weight (input 1, of rank `rank`) that indexes output
// channels, given its attributes: Conv 0, Gemm 0 with transB else 1, MatMul
// the last. A per-channel weight is accepted along this axis only; -1 when
// there is none (a 1-D MatMul operand).
int64_t Int8OutputChannelAxis(const Node& node, size_t rank);

namespace ref {

// The values of input `input` less their zero points (per `p`'s axis), each
// checked to be an integer in [-128, 127]; the error names the node and the
// first element that is not.
StatusOr<std::vector<int32_t>> CenteredInt8(const Node& node, int input,
                                            const ConstView& v,
                                            const QuantParams& p);

// Checks the parameters an int8 kernel takes: x per tensor, w per tensor or
// along Int8OutputChannelAxis of a weight of shape `w_shape`.
Status CheckInt8Params(const Node& node, const QuantParams& x,
                       const QuantParams& w, const Shape& w_shape);

// An error naming the node unless `acc` fits an int32 accumulator.
Status CheckInt32(const Node& node, int64_t acc);

// s_x * s_w[c] in f32: the scale of output channel `c`.
inline float Int8OutputScale(const QuantParams& x, const QuantParams& w,
                             int64_t c) {
  return x.scale[0] * w.scale[w.per_tensor() ? 0 : c];
}

}  // namespace ref
}  // namespace shoal

#endif  // SHOAL_KERNELS_REFERENCE_INT8_KERNELS_H_
