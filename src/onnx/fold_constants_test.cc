#include "onnx/fold_constants.h"

#include <gtest/gtest.h>

#include <limits>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::AddIntAttr;
using onnx_test::AddIntsAttr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

onnx::NodeProto MakeNode(const std::string& op, int inputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(op);
  for (int i = 0; i < inputs; ++i) n.add_input("in" + std::to_string(i));
  n.add_output("out");
  return n;
}

// Folds `n` over `values` (nullptr: an absent input) at `opset`.
ConstValue Fold(const onnx::NodeProto& n, std::vector<const ConstValue*> values,
                int64_t opset = 13) {
  std::vector<FoldInput> in(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    in[i].present = values[i] != nullptr;
    in[i].value = values[i];
    in[i].shape = values[i] ? &values[i]->shape : nullptr;
  }
  EXPECT_TRUE(CanFold(n, in));
  auto out = FoldNode(n, opset, in, ".");
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ(out->size(), 1u);
  return (*out)[0];
}

ConstValue Ints(Shape s, std::vector<int64_t> v) {
  return ConstValue::Ints(s, v);
}

// Integer Mod takes the divisor's sign (fmod=0) or the dividend's (fmod=1);
// float Mod is fmod.
TEST(OnnxFold, Mod) {
  const ConstValue a = Ints({4}, {7, -7, 7, -7}), b = Ints({4}, {3, 3, -3, -3});
  EXPECT_EQ(Fold(MakeNode("Mod", 2), {&a, &b}).ints,
            (std::vector<int64_t>{1, 2, -2, -1}));
  onnx::NodeProto f = MakeNode("Mod", 2);
  AddIntAttr(&f, "fmod", 1);
  EXPECT_EQ(Fold(f, {&a, &b}).ints, (std::vector<int64_t>{1, -1, 1, -1}));
  const ConstValue x = ConstValue::Floats({2}, {5.5f, -5.5f}),
                   y = ConstValue::Floats({}, {2.f});
  EXPECT_EQ(Fold(f, {&x, &y}).floats, (std::vector<float>{1.5f, -1.5f}));
}

// swin_t's attention mask: rows of a zero tensor set by index tuples.
TEST(OnnxFold, ScatterND) {
  const ConstValue data = Ints({3, 2}, {0, 0, 0, 0, 0, 0});
  const ConstValue idx = Ints({2, 1}, {2, -3});  // rows 2 and 0
  const ConstValue upd = Ints({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(Fold(MakeNode("ScatterND", 3), {&data, &idx, &upd}).ints,
            (std::vector<int64_t>{7, 8, 0, 0, 5, 6}));
  const ConstValue one = Ints({1, 2}, {1, 1});  // element [1][1]
  const ConstValue v = ConstValue::Floats({1}, {2.5f});
  const ConstValue got = Fold(MakeNode("ScatterND", 3), {&data, &one, &v});
  EXPECT_TRUE(got.is_float);
  EXPECT_EQ(got.floats, (std::vector<float>{0, 0, 0, 2.5f, 0, 0}));
  // An index out of range is an error naming it.
  const ConstValue bad = Ints({1, 1}, {3});
  const ConstValue row = Ints({1, 2}, {1, 1});
  std::vector<FoldInput> in(3);
  const ConstValue* vals[3] = {&data, &bad, &row};
  for (int i = 0; i < 3; ++i) {
    in[i].present = true;
    in[i].value = vals[i];
    in[i].shape = &vals[i]->shape;
  }
  auto out = FoldNode(MakeNode("ScatterND", 3), 16, in, ".");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("out of range"), std::string::npos)
      << out.status().ToString();
}

// PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat.
TEST(OnnxFold, ShapeGatherUnsqueezeConcat) {
  const Shape activation = {2, 8, 3, 5};
  onnx::NodeProto shape = MakeNode("Shape", 1);
  FoldInput x;
  x.present = true;
  x.shape = &activation;
  auto s = FoldNode(shape, 13, {x}, ".");
  ASSERT_TRUE(s.ok());
  const ConstValue dims = (*s)[0];
  EXPECT_EQ(dims.ints, (std::vector<int64_t>{2, 8, 3, 5}));
  EXPECT_EQ(dims.shape, Shape{4});

  ConstValue zero = Ints({}, {0});
  ConstValue n = Fold(MakeNode("Gather", 2), {&dims, &zero});
  EXPECT_EQ(n.shape, Shape{});
  EXPECT_EQ(n.ints, std::vector<int64_t>{2});
  ConstValue axes = Ints({1}, {0});
  ConstValue n1 = Fold(MakeNode("Unsqueeze", 2), {&n, &axes});
  EXPECT_EQ(n1.shape, Shape{1});
  ConstValue minus1 = Ints({1}, {-1});
  onnx::NodeProto concat = MakeNode("Concat", 2);
  AddIntAttr(&concat, "axis", 0);
  ConstValue target = Fold(concat, {&n1, &minus1});
  EXPECT_EQ(target.ints, (std::vector<int64_t>{2, -1}));
}

TEST(OnnxFold, ShapeWithStartAndEnd) {
  const Shape activation = {1, 3, 7, 9};
  onnx::NodeProto n = MakeNode("Shape", 1);
  AddIntAttr(&n, "start", 1);
  AddIntAttr(&n, "end", -1);
  FoldInput x;
  x.present = true;
  x.shape = &activation;
  auto s = FoldNode(n, 15, {x}, ".");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].ints, (std::vector<int64_t>{3, 7}));
}

TEST(OnnxFold, UnsqueezeAndSqueezeAxesAsAttributeBeforeOpset13) {
  ConstValue v = Ints({3}, {4, 5, 6});
  onnx::NodeProto un = MakeNode("Unsqueeze", 1);
  AddIntsAttr(&un, "axes", {0, 2});
  ConstValue u = Fold(un, {&v}, 11);
  EXPECT_EQ(u.shape, (Shape{1, 3, 1}));
  onnx::NodeProto sq = MakeNode("Squeeze", 1);
  ConstValue s = Fold(sq, {&u}, 11);  // no axes: every 1
  EXPECT_EQ(s.shape, Shape{3});
  EXPECT_EQ(s.ints, v.ints);
}

// ONNX's int64 sentinels survive: INT64_MAX ends, negative steps.
TEST(OnnxFold, SliceWithSentinelsAndNegativeStep) {
  ConstValue v = Ints({2, 4}, {0, 1, 2, 3, 10, 11, 12, 13});
  ConstValue starts = Ints({2}, {1, -1});
  ConstValue ends = Ints({2}, {kMax, std::numeric_limits<int64_t>::min()});
  ConstValue axes = Ints({2}, {0, 1});
  ConstValue steps = Ints({2}, {1, -2});
  ConstValue s =
      Fold(MakeNode("Slice", 5), {&v, &starts, &ends, &axes, &steps});
  EXPECT_EQ(s.shape, (Shape{1, 2}));
  EXPECT_EQ(s.ints, (std::vector<int64_t>{13, 11}));

  // Opset 9: starts/ends/axes are attributes.
  onnx::NodeProto old = MakeNode("Slice", 1);
  AddIntsAttr(&old, "starts", {1});
  AddIntsAttr(&old, "ends", {3});
  AddIntsAttr(&old, "axes", {1});
  ConstValue o = Fold(old, {&v}, 9);
  EXPECT_EQ(o.ints, (std::vector<int64_t>{1, 2, 11, 12}));
}

TEST(OnnxFold, TransposeReshapeAndCast) {
  // PyTorch's F.pad: a [n, 2] pad list reversed and transposed.
  ConstValue v = Ints({3, 2}, {1, 2, 3, 4, 5, 6});
  ConstValue t = Fold(MakeNode("Transpose", 1), {&v});
  EXPECT_EQ(t.shape, (Shape{2, 3}));
  EXPECT_EQ(t.ints, (std::vector<int64_t>{1, 3, 5, 2, 4, 6}));
  ConstValue shape = Ints({2}, {0, -1});
  ConstValue r = Fold(MakeNode("Reshape", 2), {&t, &shape});
  EXPECT_EQ(r.shape, (Shape{2, 3}));
  onnx::NodeProto cast = MakeNode("Cast", 1);
  AddIntAttr(&cast, "to", onnx::TensorProto::FLOAT);
  ConstValue f = Fold(cast, {&r});
  ASSERT_TRUE(f.is_float);
  EXPECT_EQ(f.floats, (std::vector<float>{1, 3, 5, 2, 4, 6}));
  cast.mutable_attribute(0)->set_i(onnx::TensorProto::INT64);
  ConstValue back = Fold(cast, {&f});
  EXPECT_FALSE(back.is_float);
  EXPECT_EQ(back.ints, r.ints);
}

TEST(OnnxFold, ArithmeticBroadcastsAndIntegerDivisionTruncates) {
  ConstValue a = Ints({2, 2}, {7, -7, 8, 9});
  ConstValue b = Ints({2}, {2, 3});
  EXPECT_EQ(Fold(MakeNode("Div", 2), {&a, &b}).ints,
            (std::vector<int64_t>{3, -2, 4, 3}));
  EXPECT_EQ(Fold(MakeNode("Mul", 2), {&a, &b}).ints,
            (std::vector<int64_t>{14, -21, 16, 27}));
  EXPECT_EQ(Fold(MakeNode("Sub", 2), {&a, &b}).shape, (Shape{2, 2}));
  ConstValue half = ConstValue::Floats({}, {0.5f});
  ConstValue f = Fold(MakeNode("Add", 2), {&b, &half});
  ASSERT_TRUE(f.is_float);
  EXPECT_EQ(f.floats, (std::vector<float>{2.5f, 3.5f}));
  ConstValue zero = Ints({}, {0});
  std::vector<FoldInput> in(2);
  in[0] = {true, &a, &a.shape};
  in[1] = {true, &zero, &zero.shape};
  EXPECT_FALSE(FoldNode(MakeNode("Div", 2), 13, in, ".").ok());
}

TEST(OnnxFold, ConstantOfShapeEqualWhereExpandRange) {
  ConstValue shape = Ints({1}, {3});
  onnx::NodeProto cos = MakeNode("ConstantOfShape", 1);
  auto* a = cos.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(-1);
  ConstValue ones = Fold(cos, {&shape});
  EXPECT_EQ(ones.ints, (std::vector<int64_t>{-1, -1, -1}));

  ConstValue dims = Ints({3}, {4, -1, 6});
  ConstValue eq = Fold(MakeNode("Equal", 2), {&dims, &ones});
  EXPECT_EQ(eq.ints, (std::vector<int64_t>{0, 1, 0}));
  ConstValue one = Ints({}, {1});
  ConstValue w = Fold(MakeNode("Where", 3), {&eq, &one, &dims});
  EXPECT_EQ(w.ints, (std::vector<int64_t>{4, 1, 6}));

  ConstValue col = Ints({2, 1}, {1, 2});
  ConstValue to = Ints({2}, {2, 3});
  ConstValue e = Fold(MakeNode("Expand", 2), {&col, &to});
  EXPECT_EQ(e.ints, (std::vector<int64_t>{1, 1, 1, 2, 2, 2}));

  ConstValue start = Ints({}, {5}), limit = Ints({}, {-1}),
             delta = Ints({}, {-2});
  ConstValue r = Fold(MakeNode("Range", 3), {&start, &limit, &delta});
  EXPECT_EQ(r.ints, (std::vector<int64_t>{5, 3, 1}));
}

// Values past kMaxFoldedElements are refused before they are made: a
// 140-byte model's Range to 2^40 took 4 GiB, and each of these would
// allocate gigabytes.
TEST(OnnxFold, ValuesOverTheLimitAreRefusedBeforeTheyAreMade) {
  auto refused = [](const onnx::NodeProto& n,
                    const std::vector<const ConstValue*>& vals) {
    std::vector<FoldInput> in(vals.size());
    for (size_t i = 0; i < vals.size(); ++i)
      in[i] = {true, vals[i], &vals[i]->shape};
    auto r = FoldNode(n, 13, in, ".");
    EXPECT_FALSE(r.ok()) << n.op_type();
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("limit"), std::string::npos)
          << r.status().message();
    }
  };
  ConstValue big = Ints({3}, {1 << 12, 1 << 12, 2});
  refused(MakeNode("ConstantOfShape", 1), {&big});
  ConstValue start = Ints({}, {0}), limit = Ints({}, {int64_t{1} << 40}),
             delta = Ints({}, {1});
  refused(MakeNode("Range", 3), {&start, &limit, &delta});
  ConstValue fstart = ConstValue::Floats({}, {0.f}),
             flimit = ConstValue::Floats({}, {1e30f}),
             fdelta = ConstValue::Floats({}, {1e-30f});
  refused(MakeNode("Range", 3), {&fstart, &flimit, &fdelta});
  ConstValue col = Ints({1 << 13, 1}, std::vector<int64_t>(1 << 13, 1));
  ConstValue row = Ints({1, 1 << 12}, std::vector<int64_t>(1 << 12, 2));
  refused(MakeNode("Add", 2), {&col, &row});
  ConstValue to = Ints({2}, {1 << 13, 1 << 12});
  refused(MakeNode("Expand", 2), {&col, &to});
  // Just within: a 4096 x 4096 mask folds.
  ConstValue mask = Ints({2}, {1 << 12, 1 << 12});
  onnx::NodeProto cos = MakeNode("ConstantOfShape", 1);
  std::vector<FoldInput> in = {{true, &mask, &mask.shape}};
  auto ok = FoldNode(cos, 13, in, ".");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].size(), kMaxFoldedElements);
}

TEST(OnnxFold, ConstantNodeForms) {
  onnx::NodeProto c = MakeNode("Constant", 0);
  AddIntsAttr(&c, "value_ints", {3, 4});
  ConstValue v = Fold(c, {});
  EXPECT_EQ(v.ints, (std::vector<int64_t>{3, 4}));
  onnx::NodeProto f = MakeNode("Constant", 0);
  auto* a = f.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.5f);
  ConstValue fv = Fold(f, {});
  EXPECT_TRUE(fv.is_float);
  EXPECT_EQ(fv.shape, Shape{});
  onnx::NodeProto s = MakeNode("Constant", 0);
  auto* sa = s.add_attribute();
  sa->set_name("value_string");
  sa->set_type(onnx::AttributeProto::STRING);
  auto st = FoldNode(s, 13, {}, ".");
  EXPECT_EQ(st.status().code(), Code::kUnsupported);
}

TEST(OnnxFold, NeedsKnownInputs) {
  onnx::NodeProto n = MakeNode("Add", 2);
  ConstValue a = Ints({1}, {1});
  std::vector<FoldInput> in(2);
  in[0] = {true, &a, &a.shape};
  in[1].present = true;  // a run-time tensor
  EXPECT_FALSE(CanFold(n, in));
  EXPECT_FALSE(IsFoldableOp("Conv"));
  EXPECT_TRUE(IsFoldableOp("Gather"));
}

TEST(OnnxFold, GatherOutOfRangeIsAnError) {
  ConstValue v = Ints({3}, {1, 2, 3});
  ConstValue idx = Ints({}, {3});
  std::vector<FoldInput> in = {{true, &v, &v.shape}, {true, &idx, &idx.shape}};
  auto out = FoldNode(MakeNode("Gather", 2), 13, in, ".");
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace shoal
