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

}  // namespace
}  // namespace shoal
