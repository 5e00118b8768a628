// Bad ONNX input gives a clear error naming the file (and the node), never
// a crash: truncated files, random bytes, unknown ops and attributes, shape
// mismatches, missing files; and the CLI's exit codes for them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "models/zoo.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using namespace onnx_test;  // NOLINT: the model-writing helpers

bool Mentions(const Status& s, const std::string& what) {
  return s.message().find(what) != std::string::npos;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string ExportLenet(const TempDir& dir) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  Model m;
  m.graph = *e->build(e->input_shape);
  m.weights = RandomWeights(m.graph, 1);
  const std::string path = dir.File("lenet5.onnx");
  EXPECT_TRUE(ExportOnnx(m, path).ok());
  return path;
}

TEST(OnnxBadInput, TruncatedFile) {
  TempDir dir;
  const std::string bytes = ReadAll(ExportLenet(dir));
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{10}, size_t{100},
                     bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    const std::string path = dir.File("cut.onnx");
    WriteAll(path, bytes.substr(0, cut));
    auto g = ImportOnnx(path, OnnxImportOptions{});
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
    EXPECT_TRUE(Mentions(g.status(), path)) << g.status().message();
  }
}

TEST(OnnxBadInput, RandomBytes) {
  TempDir dir;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    std::mt19937_64 rng(seed);
    std::string bytes(4096, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    const std::string path = dir.File("random.onnx");
    WriteAll(path, bytes);
    auto g = ImportOnnx(path, OnnxImportOptions{});
    ASSERT_FALSE(g.ok()) << seed;
    EXPECT_EQ(g.status().code(), Code::kInvalidArgument)
        << g.status().message();
    EXPECT_TRUE(Mentions(g.status(), path)) << g.status().message();
  }
}

TEST(OnnxBadInput, MissingFile) {
  auto g = ImportOnnx("/nonexistent/model.onnx", OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kNotFound);
  EXPECT_TRUE(Mentions(g.status(), "/nonexistent/model.onnx"));
}

TEST(OnnxBadInput, UnknownOp) {
  for (const char* op : {"FooBar", "Upsample", "NonMaxSuppression"}) {
    onnx::ModelProto m = NewModel({"1", "3", "4", "4"});
    AddNode(&m, "Relu", {"x"}, {"r"});
    AddNode(&m, op, {"r"}, {"y"}, "mystery_node");
    AddOutput(&m, "y");
    TempDir dir;
    const std::string path = WriteModel(dir, "unknown.onnx", m);
    auto g = ImportOnnx(path, OnnxImportOptions{});
    ASSERT_FALSE(g.ok()) << op;
    EXPECT_EQ(g.status().code(), Code::kUnsupported);
    for (const std::string& part :
         {std::string(op), std::string("mystery_node"), path})
      EXPECT_TRUE(Mentions(g.status(), part)) << g.status().message();
  }
}

// All unsupported ops in one error, each with its count and first node,
// in the order the graph first uses them.
TEST(OnnxBadInput, EveryUnsupportedOpAtOnce) {
  onnx::ModelProto m = NewModel({"1", "3", "4", "4"});
  AddNode(&m, "FooBar", {"x"}, {"a"}, "foo_1");
  AddNode(&m, "Relu", {"a"}, {"b"}, "relu");
  AddNode(&m, "Upsample", {"b"}, {"c"}, "up_1");
  AddNode(&m, "FooBar", {"c"}, {"d"}, "foo_2");
  AddNode(&m, "Relu", {"d"}, {"e"}, "custom")->set_domain("com.example");
  AddNode(&m, "FooBar", {"e"}, {"y"}, "foo_3");
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "many.onnx", ".", OnnxImportOptions{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kUnsupported);
  const std::string& msg = g.status().message();
  EXPECT_TRUE(Mentions(g.status(), "3 unsupported operators")) << msg;
  EXPECT_TRUE(Mentions(g.status(), "'FooBar' (3 nodes, first 'foo_1')")) << msg;
  EXPECT_TRUE(Mentions(g.status(), "'Upsample' (1 node, first 'up_1')")) << msg;
  EXPECT_TRUE(
      Mentions(g.status(), "'com.example::Relu' (1 node, first 'custom')"))
      << msg;
  EXPECT_LT(msg.find("FooBar"), msg.find("Upsample")) << msg;
  EXPECT_TRUE(Mentions(g.status(), "many.onnx")) << msg;
}

TEST(OnnxBadInput, CustomDomainOp) {
  onnx::ModelProto m = NewModel({"1", "4"});
  AddNode(&m, "Relu", {"x"}, {"y"}, "custom")->set_domain("com.example");
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "m.onnx", ".", OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kUnsupported);
  EXPECT_TRUE(Mentions(g.status(), "com.example")) << g.status().message();
}

TEST(OnnxBadInput, UnsupportedAttribute) {
  onnx::ModelProto m = NewModel({"1", "3", "4", "4"});
  AddIntAttr(AddNode(&m, "Relu", {"x"}, {"y"}, "odd_relu"), "frobnicate", 1);
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "attr.onnx", ".", OnnxImportOptions{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kUnsupported);
  for (const char* part : {"frobnicate", "odd_relu", "attr.onnx"})
    EXPECT_TRUE(Mentions(g.status(), part)) << g.status().message();
}

TEST(OnnxBadInput, ConvWeightChannelsMismatch) {
  onnx::ModelProto m = NewModel({"1", "3", "8", "8"});
  AddFloatInit(&m, "w", {4, 2, 3, 3}, std::vector<float>(72, 0.f));
  AddNode(&m, "Conv", {"x", "w"}, {"y"}, "bad_conv");
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "conv.onnx", ".", OnnxImportOptions{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  for (const char* part : {"bad_conv", "conv.onnx", "channels"})
    EXPECT_TRUE(Mentions(g.status(), part)) << g.status().message();
}

TEST(OnnxBadInput, InitializerDataOfTheWrongSize) {
  onnx::ModelProto m = NewModel({"1", "4"});
  AddFloatInit(&m, "b", {4}, {1.f, 2.f, 3.f});
  AddNode(&m, "Add", {"x", "b"}, {"y"});
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "b.onnx", ".", OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(g.status(), "'b'")) << g.status().message();
}

TEST(OnnxBadInput, UndefinedTensorAndIntegerInput) {
  onnx::ModelProto m = NewModel({"1", "4"});
  AddNode(&m, "Add", {"x", "ghost"}, {"y"});
  AddOutput(&m, "y");
  auto g = ImportOnnxModel(m, "g.onnx", ".", OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(g.status(), "ghost")) << g.status().message();

  onnx::ModelProto ids = NewModel({"1", "4"});
  ids.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT64);
  AddNode(&ids, "Relu", {"x"}, {"y"});
  AddOutput(&ids, "y");
  g = ImportOnnxModel(ids, "ids.onnx", ".", OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kUnsupported);
  EXPECT_TRUE(Mentions(g.status(), "INT64")) << g.status().message();
}

// The CLI exits 2 for unsupported ops, 1 for other errors; stderr names
// the file and the node.
TEST(OnnxBadInput, CliExitCodes) {
  TempDir dir;
  onnx::ModelProto m = NewModel({"1", "3", "4", "4"});
  AddNode(&m, "FooBar", {"x"}, {"y"}, "mystery_node");
  AddOutput(&m, "y");
  const std::string unknown = WriteModel(dir, "unknown.onnx", m);
  std::string out;
  EXPECT_EQ(RunCommand(std::string(SHOAL_BINARY) + " analyze " + unknown, &out),
            2);
  EXPECT_NE(out.find("mystery_node"), std::string::npos) << out;
  EXPECT_NE(out.find(unknown), std::string::npos) << out;

  const std::string bytes = ReadAll(ExportLenet(dir));
  const std::string cut = dir.File("cut.onnx");
  WriteAll(cut, bytes.substr(0, bytes.size() / 2));
  out.clear();
  EXPECT_EQ(RunCommand(std::string(SHOAL_BINARY) + " analyze " + cut, &out), 1);
  EXPECT_NE(out.find(cut), std::string::npos) << out;

  out.clear();
  EXPECT_EQ(RunCommand(
                std::string(SHOAL_BINARY) + " analyze " + dir.File("none.onnx"),
                &out),
            1);
  EXPECT_NE(out.find("none.onnx"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
