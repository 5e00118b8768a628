// Test helper for op registrations: builds a one-node graph, runs shape
// inference, the verifier and the cost model over it, so each op test states
// only its inputs, attributes and the expected numbers.
#ifndef SHOAL_OPS_OP_TEST_UTIL_H_
#define SHOAL_OPS_OP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "graph/cost.h"
#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"

namespace shoal {
namespace op_test {

using Ints = std::vector<int64_t>;

// One input of the node under test; an empty name is an absent optional
// input.
struct In {
  std::string name;
  Shape shape;
  bool weight = false;
};
inline In Act(std::string name, Shape s) { return {std::move(name), s, false}; }
inline In Wt(std::string name, Shape s) { return {std::move(name), s, true}; }
inline In Absent() { return {"", {}, false}; }

struct OneNode {
  Graph graph;
  Status infer;   // of InferShapes
  Status verify;  // of VerifyGraph, run only when inference succeeded

  const Node& node() const { return graph.nodes.at(0); }
  const Shape& out(size_t i = 0) const {
    return graph.FindTensor(node().outputs.at(i))->shape;
  }
  // Cost of the node; aborts the test binary (programmer error) on failure,
  // so call it only after Ok().
  NodeCost cost() const { return ComputeNodeCost(graph, node()).value(); }

  // Inference and verification both succeeded.
  ::testing::AssertionResult Ok() const {
    if (!infer.ok()) {
      return ::testing::AssertionFailure()
             << "InferShapes: " << infer.ToString();
    }
    if (!verify.ok()) {
      return ::testing::AssertionFailure()
             << "VerifyGraph: " << verify.ToString();
    }
    return ::testing::AssertionSuccess();
  }

  // Inference failed with an error whose message names the node, so a user
  // can find the layer at fault in a large model.
  ::testing::AssertionResult FailsNamingNode() const {
    if (infer.ok()) {
      return ::testing::AssertionFailure()
             << "inference succeeded with output " << ShapeToString(out(0));
    }
    const std::string quoted = "'" + node().name + "'";
    if (infer.message().find(quoted) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message does not name " << quoted << ": " << infer.ToString();
    }
    return ::testing::AssertionSuccess();
  }
};

// Builds inputs + weights + one node of `op` with `num_outputs` outputs
// ("y0", "y1", ...), marks every output a graph output and runs shape
// inference, then the verifier.
inline OneNode RunOneNode(const std::string& op, const std::vector<In>& inputs,
                          Attrs attrs = {}, int num_outputs = 1,
                          const std::string& node_name = "node_under_test") {
  OneNode r;
  r.graph.name = "one_" + op;
  Node n;
  n.name = node_name;
  n.op = op;
  n.attrs = std::move(attrs);
  for (const In& in : inputs) {
    n.inputs.push_back(in.name);
    if (in.name.empty() || r.graph.FindTensor(in.name)) continue;
    Status s = in.weight ? r.graph.AddWeight(in.name, in.shape)
                         : r.graph.AddInput(in.name, in.shape);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  for (int i = 0; i < num_outputs; ++i) {
    // Appending avoids GCC 12's false -Wrestrict on "lit" + to_string().
    n.outputs.push_back(std::string("y").append(std::to_string(i)));
    r.graph.outputs.push_back(n.outputs.back());
  }
  Status s = r.graph.AddNode(std::move(n));
  EXPECT_TRUE(s.ok()) << s.ToString();
  r.infer = InferShapes(&r.graph);
  if (r.infer.ok()) r.verify = VerifyGraph(r.graph);
  return r;
}

// Attribute map from a brace list: {{"group", 2}, {"pads", Ints{1, 1}}}.
inline Attrs MakeAttrs(
    std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

}  // namespace op_test
}  // namespace shoal

#endif  // SHOAL_OPS_OP_TEST_UTIL_H_
