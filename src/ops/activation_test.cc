// Unary activations and Softmax: the output takes the input's shape, no
// weights, no MACs; misuse (arity, Softmax's axis) names the node.
#include <gtest/gtest.h>

#include "graph/op_registry.h"
#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::MakeAttrs;
using op_test::RunOneNode;

struct UnaryCase {
  const char* op;
  Attrs attrs;
};

std::vector<UnaryCase> UnaryCases() {
  return {
      {"Relu", {}},
      {"LeakyRelu", MakeAttrs({{"alpha", 0.1f}})},
      {"Clip", MakeAttrs({{"min", 0.f}, {"max", 6.f}})},
      {"Sigmoid", {}},
      {"HardSwish", {}},
      {"Softmax", MakeAttrs({{"axis", -1}})},
      {"Dropout", MakeAttrs({{"ratio", 0.5f}, {"seed", 0.f}})},
      {"Identity", {}},
  };
}

TEST(ActivationTest, KeepsShapeWithoutCost) {
  const std::vector<Shape> shapes = {
      {1, 1000}, {1, 64, 56, 56}, {2, 3, 4, 5, 6}, {7}};
  for (const UnaryCase& uc : UnaryCases()) {
    for (const Shape& s : shapes) {
      auto r = RunOneNode(uc.op, {Act("x", s)}, uc.attrs);
      ASSERT_TRUE(r.Ok()) << uc.op << " " << ShapeToString(s);
      EXPECT_EQ(r.out(), s) << uc.op;
      NodeCost c = r.cost();
      EXPECT_EQ(c.params, 0) << uc.op;
      EXPECT_EQ(c.weight_elements, 0) << uc.op;
      EXPECT_EQ(c.macs, 0) << uc.op;
      EXPECT_EQ(c.input_elements, NumElements(s)) << uc.op;
      EXPECT_EQ(c.output_elements, NumElements(s)) << uc.op;
    }
  }
}

TEST(ActivationTest, UnaryOpsAreElementwiseButSoftmaxIsNot) {
  // Softmax mixes values along its axis, so a split along that axis is not
  // free; the others may be split anywhere.
  for (const UnaryCase& uc : UnaryCases()) {
    const OpSchema* op = OpRegistry::Global().Find(uc.op);
    ASSERT_NE(op, nullptr) << uc.op;
    EXPECT_EQ(op->elementwise(), std::string(uc.op) != "Softmax") << uc.op;
  }
}

TEST(ActivationTest, RejectsSecondInput) {
  for (const UnaryCase& uc : UnaryCases()) {
    auto r = RunOneNode(uc.op, {Act("x", {1, 8}), Act("z", {1, 8})}, uc.attrs,
                        1, std::string("two_inputs_") + uc.op);
    EXPECT_TRUE(r.FailsNamingNode()) << uc.op;
  }
}

TEST(ActivationTest, RejectsSecondOutput) {
  // Dropout's optional mask output is not modelled (inference only).
  for (const UnaryCase& uc : UnaryCases()) {
    auto r = RunOneNode(uc.op, {Act("x", {1, 8})}, uc.attrs, 2,
                        std::string("two_outputs_") + uc.op);
    EXPECT_TRUE(r.FailsNamingNode()) << uc.op;
  }
}

TEST(SoftmaxTest, NegativeAndDefaultAxis) {
  for (int64_t axis : {-4, -1, 0, 3}) {
    auto r = RunOneNode("Softmax", {Act("x", {1, 2, 3, 4})},
                        MakeAttrs({{"axis", axis}}));
    ASSERT_TRUE(r.Ok()) << axis;
    EXPECT_EQ(r.out(), (Shape{1, 2, 3, 4}));
  }
  auto def = RunOneNode("Softmax", {Act("x", {1, 10})});
  ASSERT_TRUE(def.Ok());
  EXPECT_EQ(def.out(), (Shape{1, 10}));
}

TEST(SoftmaxTest, RejectsAxisOutOfRange) {
  for (int64_t axis : {2, -3, 100}) {
    auto r = RunOneNode("Softmax", {Act("x", {1, 10})},
                        MakeAttrs({{"axis", axis}}), 1, "softmax_axis");
    EXPECT_TRUE(r.FailsNamingNode()) << axis;
  }
}

TEST(ActivationTest, VerifierRejectsAttributeOfAnotherOp) {
  // Relu takes no alpha; a typo'd import must not pass silently.
  auto r = RunOneNode("Relu", {Act("x", {1, 8})}, MakeAttrs({{"alpha", 0.1f}}),
                      1, "relu_alpha");
  ASSERT_TRUE(r.infer.ok());
  EXPECT_EQ(r.verify.code(), Code::kUnsupported);
  EXPECT_NE(r.verify.message().find("'relu_alpha'"), std::string::npos);
}

}  // namespace
}  // namespace shoal
