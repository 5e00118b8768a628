// Every op shoal claims to support must be registered: a registration lost
// (e.g. a file dropped from the build, or a static initialiser discarded by
// the linker) fails here rather than at import time of some model.
#include <gtest/gtest.h>

#include <set>

#include "graph/op_registry.h"

namespace shoal {
namespace {

const char* const kSupportedOps[] = {
    "Conv",
    "Gemm",
    "MatMul",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "BatchNormalization",
    "LRN",
    "Relu",
    "LeakyRelu",
    "Clip",
    "Sigmoid",
    "HardSwish",
    "Softmax",
    "Dropout",
    "Identity",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "ReduceMean",
    "Concat",
    "Flatten",
    "Reshape",
    "Transpose",
    "Slice",
    "Split",
    "Pad",
    "SpaceToDepth",
    // What the torchvision models add (mobilenet_v3, efficientnet, lraspp,
    // vit): activations, LayerNorm, selection and resizing.
    "HardSigmoid",
    "Erf",
    "Sqrt",
    "Pow",
    "Abs",
    "Neg",
    "Exp",
    "Tanh",
    "Where",
    "Expand",
    "Gather",
    "LayerNormalization",
    "Resize",
    // ssd300_vgg16's L2Norm.
    "ReduceL2",
};

TEST(RegisteredOpsTest, EverySupportedOpIsRegistered) {
  const OpRegistry& reg = OpRegistry::Global();
  std::vector<std::string> names = reg.Names();
  std::set<std::string> listed(names.begin(), names.end());
  for (const char* op : kSupportedOps) {
    const OpSchema* s = reg.Find(op);
    ASSERT_NE(s, nullptr) << op << " is not registered";
    EXPECT_EQ(s->name(), op);
    EXPECT_TRUE(listed.count(op)) << op << " missing from Names()";
  }
}

TEST(RegisteredOpsTest, LookupIsExact) {
  // ONNX op types are case-sensitive.
  EXPECT_EQ(OpRegistry::Global().Find("conv"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("Conv2d"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find(""), nullptr);
}

TEST(RegisteredOpsTest, ArityMatchesOnnx) {
  struct Arity {
    const char* op;
    int min_in, max_in, min_out, max_out;
  };
  const Arity arities[] = {
      {"Conv", 2, 3, 1, 1},   {"Gemm", 2, 3, 1, 1},
      {"MatMul", 2, 2, 1, 1}, {"BatchNormalization", 5, 5, 1, 1},
      {"Add", 2, 2, 1, 1},    {"Relu", 1, 1, 1, 1},
  };
  for (const Arity& a : arities) {
    const OpSchema* s = OpRegistry::Global().Find(a.op);
    ASSERT_NE(s, nullptr) << a.op;
    EXPECT_EQ(s->min_inputs(), a.min_in) << a.op;
    EXPECT_EQ(s->max_inputs(), a.max_in) << a.op;
    EXPECT_EQ(s->min_outputs(), a.min_out) << a.op;
    EXPECT_EQ(s->max_outputs(), a.max_out) << a.op;
  }
  // Variadic: any number of Concat inputs, of Split outputs.
  EXPECT_GE(OpRegistry::Global().Find("Concat")->max_inputs(), 64);
  EXPECT_GE(OpRegistry::Global().Find("Split")->max_outputs(), 64);
}

TEST(RegisteredOpsTest, ConvAndPoolKnowTheirOnnxAttributes) {
  const std::set<std::string>& conv =
      OpRegistry::Global().Find("Conv")->attrs();
  for (const char* a :
       {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"})
    EXPECT_TRUE(conv.count(a)) << a;
  const std::set<std::string>& pool =
      OpRegistry::Global().Find("MaxPool")->attrs();
  for (const char* a : {"kernel_shape", "strides", "pads", "dilations",
                        "ceil_mode", "auto_pad", "storage_order"})
    EXPECT_TRUE(pool.count(a)) << a;
}

Node WithAttrs(const std::string& op, const Attrs& attrs) {
  Node n;
  n.name = "n";
  n.op = op;
  n.attrs = attrs;
  return n;
}

// The weight layouts the partitioners, LCP and the profiler read: where
// each layer keeps its output and input channels.
TEST(RegisteredOpsTest, LayersSayWhereTheirWeightKeepsChannels) {
  Attrs grouped;
  grouped.Set("group", int64_t{4});
  const WeightLayout conv = WeightLayoutOf(WithAttrs("Conv", grouped));
  EXPECT_EQ(conv.out_axis, 0);  // W [M, C/group, kh, kw]
  EXPECT_EQ(conv.in_axis, 1);
  EXPECT_EQ(conv.groups, 4);
  EXPECT_TRUE(conv.feature_map);
  EXPECT_FALSE(conv.plain());
  EXPECT_TRUE(WeightLayoutOf(WithAttrs("Conv", {})).plain());

  const WeightLayout gemm = WeightLayoutOf(WithAttrs("Gemm", {}));
  EXPECT_EQ(gemm.out_axis, 1);  // B [K, N]
  EXPECT_EQ(gemm.in_axis, 0);
  EXPECT_FALSE(gemm.feature_map);
  EXPECT_TRUE(gemm.plain());
  Attrs trans;
  trans.Set("transB", int64_t{1});
  trans.Set("transA", int64_t{1});
  const WeightLayout gemm_t = WeightLayoutOf(WithAttrs("Gemm", trans));
  EXPECT_EQ(gemm_t.out_axis, 0);  // B [N, K]
  EXPECT_EQ(gemm_t.in_axis, 1);
  EXPECT_TRUE(gemm_t.transposed_input);
  EXPECT_FALSE(gemm_t.plain());

  const WeightLayout matmul = WeightLayoutOf(WithAttrs("MatMul", {}));
  EXPECT_EQ(matmul.out_axis, 1);
  EXPECT_EQ(matmul.in_axis, 0);
  // Not split by weight: graph/matmul_to_gemm.h makes a Gemm of it first.
  EXPECT_FALSE(SplitFactsOf("MatMul").by_weight);

  for (const char* op : {"Relu", "MaxPool", "BatchNormalization", "Concat"})
    EXPECT_FALSE(WeightLayoutOf(WithAttrs(op, {})).any()) << op;
  EXPECT_FALSE(WeightLayoutOf(WithAttrs("NoSuchOp", {})).any());
}

TEST(RegisteredOpsTest, ConcatAndQuantizationSayWhatTheyAre) {
  EXPECT_TRUE(Concatenates(WithAttrs("Concat", {})));
  EXPECT_FALSE(Concatenates(WithAttrs("Add", {})));
  const Node q = WithAttrs("QuantizeLinear", {});
  const Node dq = WithAttrs("DequantizeLinear", {});
  const Node relu = WithAttrs("Relu", {});
  EXPECT_EQ(QuantRoleOf(&q), QuantRole::kQuantize);
  EXPECT_EQ(QuantRoleOf(&dq), QuantRole::kDequantize);
  EXPECT_EQ(QuantRoleOf(&relu), QuantRole::kNone);
  EXPECT_EQ(QuantRoleOf(nullptr), QuantRole::kNone);
}

}  // namespace
}  // namespace shoal
