// A MatMul by a constant 2-D weight is a dense (fully connected) layer: it is
// rewritten as a Gemm (transB=0), the form every partitioning strategy
// splits (by output or input channels of the weight) and the oneDNN backend
// runs as an inner product. This is how torch exports nn.Linear(bias=False)
// and every Linear applied to [batch..., tokens, features].
//   MatMul(A [M, K], W [K, N])        -> Gemm(A, W)
//   MatMul(A [d..., M, K], W [K, N])  -> Reshape [prod(d) M, K], Gemm,
//                                        Reshape [d..., M, N]
// A constant bias added to the product next (torch's Linear over tokens is
// MatMul, then Add) becomes the Gemm's C, and the Add goes.
// A MatMul of two activations (attention) or by a 1-D weight stays.
#ifndef SHOAL_GRAPH_MATMUL_TO_GEMM_H_
#define SHOAL_GRAPH_MATMUL_TO_GEMM_H_

#include "graph/graph.h"

namespace shoal {

// Rewrites every such MatMul of the shaped graph `g`; the Gemm keeps the
// MatMul's name and output tensor. Returns the number rewritten.
int MatMulToGemm(Graph* g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_MATMUL_TO_GEMM_H_
