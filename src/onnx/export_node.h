// One shoal node as an opset-13 ONNX node: attributes that the opset takes
// as inputs become initializers.
#ifndef SHOAL_ONNX_EXPORT_NODE_H_
#define SHOAL_ONNX_EXPORT_NODE_H_

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

// Appends the node to `graph`, and any initializers it needs. `taken`
// holds every tensor name in use; new initializer names are added to it.
Status ExportNode(const Node& n, onnx::GraphProto* graph,
                  std::set<std::string>* taken);

}  // namespace shoal

#endif  // SHOAL_ONNX_EXPORT_NODE_H_
