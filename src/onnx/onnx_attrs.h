// ONNX AttributeProto <-> shoal AttrValue for the kinds shoal keeps (int,
// float, string and their lists). Tensor and graph attributes are the
// importer's business (Constant) or unsupported.
#ifndef SHOAL_ONNX_ONNX_ATTRS_H_
#define SHOAL_ONNX_ONNX_ATTRS_H_

#include <onnx/onnx_pb.h>

#include <string>

#include "graph/attrs.h"
#include "util/status.h"

namespace shoal {

// Unsupported for TENSOR, GRAPH, SPARSE_TENSOR and their lists.
StatusOr<AttrValue> FromOnnxAttr(const onnx::AttributeProto& a);

void ToOnnxAttr(const std::string& name, const AttrValue& v,
                onnx::AttributeProto* a);

// The attribute named `name` of `node`, or nullptr.
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node,
                                     const std::string& name);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_ATTRS_H_
