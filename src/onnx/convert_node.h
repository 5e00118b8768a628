// Turns one ONNX node into a shoal node: checks its attributes against the
// op's schema and moves ONNX's constant control inputs (Reshape's shape,
// Slice's starts, Clip's bounds, ...) into attributes, since every shoal
// tensor is f32 data.
#ifndef SHOAL_ONNX_CONVERT_NODE_H_
#define SHOAL_ONNX_CONVERT_NODE_H_

#include <onnx/onnx_pb.h>

#include <optional>

#include "graph/graph.h"
#include "onnx/const_value.h"
#include "util/status.h"

namespace shoal {

// What conversion may ask the importer about the node's inputs and outputs.
class ConvertEnv {
 public:
  virtual ~ConvertEnv() = default;
  // The value of input `i` when it is known at import time; nullptr when it
  // is absent or computed at run time.
  virtual StatusOr<const ConstValue*> Constant(int i) = 0;
  // Whether input `i` is known at import time, and its ONNX element type
  // (0 for a value folded at import), without decoding it: a large weight
  // decoded only to look at its type would be held as int64.
  virtual std::optional<int32_t> ConstantType(int i) = 0;
  // The static shape of input `i`, or nullptr when unknown.
  virtual const Shape* ShapeOf(int i) = 0;
  // Whether anything reads output `i` (optional outputs such as Dropout's
  // mask may be dropped when nothing does).
  virtual bool OutputUsed(int i) = 0;
};

// Fills `out` (name left to the caller) with the op, attributes, data inputs
// (ONNX names, control inputs removed) and outputs. Unsupported for ops,
// attributes or input forms shoal does not implement; the message names the
// op and attribute, the caller adds the node and file.
Status ConvertNode(const onnx::NodeProto& node, int64_t opset, ConvertEnv* env,
                   Node* out);

}  // namespace shoal

#endif  // SHOAL_ONNX_CONVERT_NODE_H_
