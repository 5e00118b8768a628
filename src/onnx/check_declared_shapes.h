// Compares the shapes an ONNX file declares (value_info, graph outputs)
// with what shoal infers: a disagreement means shoal misreads an op.
#ifndef SHOAL_ONNX_CHECK_DECLARED_SHAPES_H_
#define SHOAL_ONNX_CHECK_DECLARED_SHAPES_H_

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

// Checks every declared tensor shape that names a shaped activation of `g`
// (after `resolve` maps ONNX names to shoal's). Symbolic dims match any
// extent; ranks and fixed dims must agree. The error names the tensor.
Status CheckDeclaredShapes(
    const onnx::GraphProto& onnx_graph, const Graph& g,
    const std::function<std::string(const std::string&)>& resolve);

}  // namespace shoal

#endif  // SHOAL_ONNX_CHECK_DECLARED_SHAPES_H_
