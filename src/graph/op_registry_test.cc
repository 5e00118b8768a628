// OpRegistry / OpSchema mechanics on a private registry (the global one is
// left untouched), and the arity checks every op inherits.
#include "graph/op_registry.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

Status OneOut(const Node&, const InputShapes& in, std::vector<Shape>* out) {
  (*out)[0] = in[0];
  return Status::Ok();
}

Node MakeNode(const std::string& name, std::vector<std::string> inputs,
              int outputs) {
  Node n;
  n.name = name;
  n.op = "Toy";
  n.inputs = std::move(inputs);
  for (int i = 0; i < outputs; ++i)
    n.outputs.push_back(std::string("o").append(std::to_string(i)));
  return n;
}

InputShapes Shapes(std::vector<bool> present) {
  InputShapes in;
  for (bool p : present) {
    in.shapes.push_back(p ? Shape{2, 3} : Shape{});
    in.present.push_back(p);
  }
  return in;
}

TEST(OpRegistryTest, RegisterFindNames) {
  OpRegistry reg;
  reg.Register("B").Inputs(1, 2).Attr("k").Infer(OneOut);
  reg.Register("A").Elementwise().Infer(OneOut);
  EXPECT_EQ(reg.Names(), (std::vector<std::string>{"A", "B"}));
  ASSERT_NE(reg.Find("B"), nullptr);
  EXPECT_EQ(reg.Find("B")->max_inputs(), 2);
  EXPECT_TRUE(reg.Find("B")->attrs().count("k"));
  EXPECT_FALSE(reg.Find("B")->elementwise());
  EXPECT_TRUE(reg.Find("A")->elementwise());
  EXPECT_EQ(reg.Find("C"), nullptr);
}

TEST(OpRegistryDeathTest, DoubleRegistrationAborts) {
  // Two registrations of one op are a programmer error (two files claiming
  // it), caught at start-up.
  EXPECT_DEATH(
      {
        OpRegistry reg;
        reg.Register("A");
        reg.Register("A");
      },
      "registered twice");
}

TEST(OpSchemaTest, ArityChecksNameTheNode) {
  OpSchema s("Toy");
  s.Inputs(1, 2).Outputs(1, 1).Infer(OneOut);
  std::vector<Shape> out;
  EXPECT_TRUE(
      s.InferShapes(MakeNode("ok", {"a"}, 1), Shapes({true}), &out).ok());
  EXPECT_EQ(out, std::vector<Shape>{(Shape{2, 3})});

  Status none = s.InferShapes(MakeNode("none", {}, 1), Shapes({}), &out);
  EXPECT_EQ(none.code(), Code::kInvalidArgument);
  EXPECT_NE(none.message().find("node 'none' (Toy)"), std::string::npos)
      << none.message();
  Status many = s.InferShapes(MakeNode("many", {"a", "b", "c"}, 1),
                              Shapes({true, true, true}), &out);
  EXPECT_NE(many.message().find("'many'"), std::string::npos);
  Status outs = s.InferShapes(MakeNode("outs", {"a"}, 2), Shapes({true}), &out);
  EXPECT_NE(outs.message().find("'outs'"), std::string::npos);
  // A required input may not be absent; an optional one may.
  Status absent = s.InferShapes(MakeNode("absent", {"", "b"}, 1),
                                Shapes({false, true}), &out);
  EXPECT_NE(absent.message().find("'absent'"), std::string::npos);
  EXPECT_TRUE(
      s.InferShapes(MakeNode("opt", {"a", ""}, 1), Shapes({true, false}), &out)
          .ok());
}

TEST(OpSchemaTest, MissingShapeFunctionIsInternal) {
  OpSchema s("Toy");
  std::vector<Shape> out;
  Status st = s.InferShapes(MakeNode("n", {"a"}, 1), Shapes({true}), &out);
  EXPECT_EQ(st.code(), Code::kInternal);
}

TEST(OpSchemaTest, NoWorkFunctionMeansNoMacs) {
  OpSchema s("Toy");
  EXPECT_EQ(
      s.ComputeWork(MakeNode("n", {"a"}, 1), Shapes({true}), {{2, 3}}).macs, 0);
  s.Work([](const Node&, const InputShapes&, const std::vector<Shape>& out) {
    OpWork w;
    w.macs = NumElements(out[0]);
    return w;
  });
  EXPECT_EQ(
      s.ComputeWork(MakeNode("n", {"a"}, 1), Shapes({true}), {{2, 3}}).macs, 6);
}

TEST(OpSchemaTest, NonParamInputs) {
  OpSchema s("Toy");
  s.NonParamInput(2);
  EXPECT_TRUE(s.IsParamInput(0));
  EXPECT_TRUE(s.IsParamInput(1));
  EXPECT_FALSE(s.IsParamInput(2));
}

TEST(ShapeErrorTest, Format) {
  Node n;
  n.name = "conv7";
  n.op = "Conv";
  Status s = ShapeError(n, "bad");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 'conv7' (Conv): bad");
}

}  // namespace
}  // namespace shoal
