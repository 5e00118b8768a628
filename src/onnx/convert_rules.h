// Internal to node conversion: per-op rules for ONNX forms that differ from
// shoal's (control inputs, legacy attributes, opset differences).
#ifndef SHOAL_ONNX_CONVERT_RULES_H_
#define SHOAL_ONNX_CONVERT_RULES_H_

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "onnx/convert_node.h"

namespace shoal {

struct ConvertCtx {
  const onnx::NodeProto& node;
  int64_t opset;
  ConvertEnv* env;
  Node* out;
  // ONNX attributes a rule has handled; the rest are copied and checked
  // against the schema.
  std::set<std::string> consumed;
  std::vector<bool> dropped;  // per ONNX input: a control input

  // Input `i` is present (a non-empty name).
  bool HasInput(int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  // The integer list of constant input `i`; Unsupported when it is computed
  // at run time. `*given` (optional) says whether it is present.
  StatusOr<std::vector<int64_t>> ConstInts(int i, const std::string& what,
                                           bool* given = nullptr);
  // A constant scalar input as float.
  StatusOr<float> ConstScalar(int i, const std::string& what);
  // The ONNX attribute, marked consumed; nullptr when absent.
  const onnx::AttributeProto* Take(const std::string& name);
  // Marks input `i` a control input: removed from the data inputs.
  void DropInput(int i);
  Status Unsupported(const std::string& what) const;
};

using ConvertRule = std::function<Status(ConvertCtx*)>;

// The rule for `op`, or nullptr when the generic conversion suffices.
const ConvertRule* FindConvertRule(const std::string& op);

// ONNX ops whose conversion yields another shoal op (Squeeze -> Reshape),
// for docs/operators.md.
const std::map<std::string, std::string>& ImportedAs();

}  // namespace shoal

#endif  // SHOAL_ONNX_CONVERT_RULES_H_
