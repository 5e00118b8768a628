// Einsum in the two forms attention writes batched matrix products in
// (maxvit_t: "BGHID,BGHJD->BGHIJ" for scores, "BGHIJ,BGHJD->BGHID" for the
// weighted sum) is read as MatMul, with a Transpose of the second operand
// when it is indexed [..., j, k]. shoal has no Einsum op: these nodes are
// replaced before translation; any other equation is unsupported.
#ifndef SHOAL_ONNX_EINSUM_H_
#define SHOAL_ONNX_EINSUM_H_

#include <onnx/onnx_pb.h>

#include <vector>

#include "util/status.h"

namespace shoal {

// True if `n` is an Einsum that EinsumAsMatMul takes.
bool IsMatMulEinsum(const onnx::NodeProto& n);

// The nodes that compute Einsum node `n`: [MatMul] or [Transpose, MatMul];
// the MatMul keeps the node's name and output. Unsupported, naming the
// equation, for any other form.
StatusOr<std::vector<onnx::NodeProto>> EinsumAsMatMul(const onnx::NodeProto& n);

}  // namespace shoal

#endif  // SHOAL_ONNX_EINSUM_H_
