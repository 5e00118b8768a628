// Which tensors are mostly zeros, from the op registry's facts: a ReLU's
// output (SparseOutput), and what ops that keep sparsity (a max pool, a
// reshape) make of one. Such tensors compress on the wire
// (runtime/tensor_codec.h), and planners price them so.
#ifndef SHOAL_GRAPH_SPARSITY_H_
#define SHOAL_GRAPH_SPARSITY_H_

#include <string>

#include "graph/graph.h"

namespace shoal {

// Whether `tensor` of `g` comes from a SparseOutput op through KeepsSparsity
// ops only (each reading it as its first input). A graph input, or a
// tensor no node of `g` produces, is not.
bool IsSparseTensor(const Graph& g, const std::string& tensor);

// Whether such a tensor passed a max pool on the way: a window's maximum is
// zero only where the whole window was, so far fewer of its values are
// (0.2 % after AlexNet's first pool on a random input, 28-32 % after its
// later ones, where the ReLUs before them have about half).
bool IsPooledSparseTensor(const Graph& g, const std::string& tensor);

}  // namespace shoal

#endif  // SHOAL_GRAPH_SPARSITY_H_
