// Every operator of a model that shoal cannot import, found before any node
// is translated, so that a user learns the whole gap in one run rather than
// one op per attempt.
#ifndef SHOAL_ONNX_UNSUPPORTED_OPS_H_
#define SHOAL_ONNX_UNSUPPORTED_OPS_H_

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

struct UnsupportedOp {
  std::string op;          // "HardSigmoid", or "domain::Op" for custom domains
  int count = 0;           // nodes of the graph using it
  std::string first_node;  // the first such node's name ("#index" if unnamed)
};

// Unsupported operators in the order of their first use. An op counts as
// supported when it is registered, converted to a registered op, or folded
// on constants (whether a given node folds is only known while importing).
std::vector<UnsupportedOp> FindUnsupportedOps(const onnx::GraphProto& g);

// Unsupported listing every op of `ops`; Ok when `ops` is empty.
Status UnsupportedOpsError(const std::vector<UnsupportedOp>& ops);

}  // namespace shoal

#endif  // SHOAL_ONNX_UNSUPPORTED_OPS_H_
