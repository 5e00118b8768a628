// Cross-checks the reference kernels against PyTorch, an independent
// implementation: seeded random cases are written to a temp dir as raw
// float32, test/py/ref_ops_oracle.py computes them in float64, and every
// output must agree within 1e-5 relative (plus 1e-6 absolute near zero).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT
using nlohmann::json;

struct In {
  Shape shape;
  float lo = -1.f, hi = 1.f;
  bool present = true;
};
In Absent() { return {{}, 0, 0, false}; }
In Positive(Shape s) { return {std::move(s), 0.2f, 2.f}; }

struct Case {
  std::string id, op;
  std::vector<In> inputs;
  Attrs attrs;
  int num_outputs = 1;
};

std::vector<Case> ConvPoolCases() {
  using S = std::string;
  return {
      {"conv2d",
       "Conv",
       {{{2, 3, 9, 9}}, {{4, 3, 3, 3}}, {{4}}},
       MakeAttrs({{"pads", Ints{1, 1, 1, 1}}})},
      {"conv2d_stride_dilation_asym",
       "Conv",
       {{{1, 4, 11, 10}}, {{6, 4, 3, 2}}, {{6}}},
       MakeAttrs({{"strides", Ints{2, 3}},
                  {"dilations", Ints{2, 1}},
                  {"pads", Ints{1, 0, 2, 1}}})},
      {"conv2d_groups",
       "Conv",
       {{{1, 6, 8, 8}}, {{9, 2, 3, 3}}, Absent()},
       MakeAttrs({{"group", int64_t{3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}}})},
      {"conv2d_depthwise",
       "Conv",
       {{{1, 5, 7, 7}}, {{5, 1, 3, 3}}, {{5}}},
       MakeAttrs({{"group", int64_t{5}}})},
      {"conv2d_same_upper",
       "Conv",
       {{{1, 2, 7, 7}}, {{3, 2, 4, 4}}},
       MakeAttrs({{"strides", Ints{2, 2}}, {"auto_pad", S("SAME_UPPER")}})},
      {"conv2d_long_sums", "Conv", {{{1, 128, 5, 5}}, {{8, 128, 3, 3}}}, {}},
      {"conv1d",
       "Conv",
       {{{2, 3, 17}}, {{4, 3, 5}}, {{4}}},
       MakeAttrs({{"strides", Ints{2}},
                  {"pads", Ints{2, 1}},
                  {"dilations", Ints{2}}})},
      {"conv3d",
       "Conv",
       {{{1, 2, 5, 6, 7}}, {{3, 2, 3, 2, 3}}, {{3}}},
       MakeAttrs({{"strides", Ints{1, 2, 1}},
                  {"pads", Ints{1, 0, 1, 1, 1, 0}},
                  {"dilations", Ints{1, 1, 2}}})},
      {"maxpool2d_ceil",
       "MaxPool",
       {{{1, 3, 10, 11}}},
       MakeAttrs({{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}}})},
      {"maxpool2d_dilation",
       "MaxPool",
       {{{1, 2, 9, 9}}},
       MakeAttrs({{"kernel_shape", Ints{2, 3}},
                  {"dilations", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}}})},
      {"maxpool1d_ceil",
       "MaxPool",
       {{{2, 3, 13}}},
       MakeAttrs({{"kernel_shape", Ints{3}},
                  {"strides", Ints{2}},
                  {"ceil_mode", int64_t{1}}})},
      {"maxpool3d_asym",
       "MaxPool",
       {{{1, 2, 5, 6, 7}}},
       MakeAttrs({{"kernel_shape", Ints{2, 3, 2}},
                  {"strides", Ints{2, 2, 2}},
                  {"pads", Ints{0, 1, 1, 0, 1, 1}}})},
      {"avgpool2d_include_pad",
       "AveragePool",
       {{{1, 3, 10, 10}}},
       MakeAttrs({{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"count_include_pad", int64_t{1}}})},
      {"avgpool2d_exclude_pad_ceil",
       "AveragePool",
       {{{1, 3, 10, 11}}},
       MakeAttrs({{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}}})},
      {"avgpool2d_include_pad_ceil",
       "AveragePool",
       {{{1, 3, 10, 11}}},
       MakeAttrs({{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}},
                  {"count_include_pad", int64_t{1}}})},
      {"avgpool1d",
       "AveragePool",
       {{{2, 2, 12}}},
       MakeAttrs({{"kernel_shape", Ints{4}},
                  {"strides", Ints{3}},
                  {"pads", Ints{1, 1}},
                  {"ceil_mode", int64_t{1}}})},
      {"avgpool3d",
       "AveragePool",
       {{{1, 2, 6, 5, 4}}},
       MakeAttrs(
           {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 1, 2}}})},
      {"global_avg", "GlobalAveragePool", {{{2, 5, 6, 7}}}, {}},
      {"global_avg3d", "GlobalAveragePool", {{{1, 3, 4, 5, 6}}}, {}},
      {"global_max", "GlobalMaxPool", {{{2, 5, 6, 7}}}, {}},
      {"lrn5",
       "LRN",
       {{{1, 12, 5, 5}, -3, 3}},
       MakeAttrs({{"size", int64_t{5}},
                  {"alpha", 0.02f},
                  {"beta", 0.75f},
                  {"bias", 2.f}})},
      {"lrn4",
       "LRN",
       {{{2, 7, 3, 4}, -3, 3}},
       MakeAttrs({{"size", int64_t{4}}, {"alpha", 0.1f}, {"beta", 0.6f}})},
      {"batchnorm",
       "BatchNormalization",
       {{{2, 4, 3, 3}}, {{4}}, {{4}}, {{4}}, Positive({4})},
       MakeAttrs({{"epsilon", 1e-3f}})},
  };
}

std::vector<Case> OtherCases() {
  using S = std::string;
  const int64_t big = std::numeric_limits<int64_t>::max();
  return {
      {"gemm",
       "Gemm",
       {{{5, 7}}, {{7, 3}}, {{3}}},
       MakeAttrs({{"alpha", 0.7f}, {"beta", 1.3f}})},
      {"gemm_trans",
       "Gemm",
       {{{7, 5}}, {{3, 7}}, {{5, 1}}},
       MakeAttrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}})},
      {"gemm_fc",
       "Gemm",
       {{{1, 1200}}, {{10, 1200}}, {{10}}},
       MakeAttrs({{"transB", int64_t{1}}})},
      {"gemm_no_c", "Gemm", {{{3, 4}}, {{4, 6}}, Absent()}, {}},
      {"matmul_batch", "MatMul", {{{2, 1, 4, 5}}, {{3, 5, 6}}}, {}},
      {"matmul_vec_batch", "MatMul", {{{5}}, {{2, 5, 3}}}, {}},
      {"matmul_mat_vec", "MatMul", {{{4, 5}}, {{5}}}, {}},
      {"matmul_dot", "MatMul", {{{5}}, {{5}}}, {}},
      {"add", "Add", {{{2, 3, 4, 5}}, {{3, 1, 5}}}, {}},
      {"sub", "Sub", {{{4, 5}}, {{2, 3, 4, 5}}}, {}},
      {"mul", "Mul", {{{1, 3, 1, 1}}, {{2, 3, 4, 4}}}, {}},
      {"div", "Div", {{{2, 3, 4}}, Positive({3, 1})}, {}},
      {"reduce_mean",
       "ReduceMean",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"axes", Ints{1, 3}}})},
      {"reduce_mean_drop",
       "ReduceMean",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"axes", Ints{-1}}, {"keepdims", int64_t{0}}})},
      {"reduce_mean_all", "ReduceMean", {{{2, 3, 4}}}, {}},
      {"reduce_l2",
       "ReduceL2",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"axes", Ints{1}}})},
      {"reduce_l2_all", "ReduceL2", {{{2, 3, 4}}}, {}},
      {"relu", "Relu", {{{3, 7}}}, {}},
      {"leaky_relu", "LeakyRelu", {{{3, 7}}}, MakeAttrs({{"alpha", 0.2f}})},
      {"clip", "Clip", {{{3, 7}}}, MakeAttrs({{"min", -0.3f}, {"max", 0.5f}})},
      {"clip_min", "Clip", {{{3, 7}}}, MakeAttrs({{"min", 0.f}})},
      {"sigmoid", "Sigmoid", {{{3, 7}, -6, 6}}, {}},
      {"hardswish", "HardSwish", {{{3, 7}, -5, 5}}, {}},
      {"identity", "Identity", {{{3, 7}}}, {}},
      {"dropout", "Dropout", {{{3, 7}}}, MakeAttrs({{"ratio", 0.3f}})},
      {"softmax_last", "Softmax", {{{3, 10}, -8, 8}}, {}},
      // Scales that put most values past int8's range saturate.
      {"quantize_per_tensor",
       "QuantizeLinear",
       {{{2, 3, 5, 5}, -3, 3}},
       MakeAttrs({{"scale", Floats{0.0137f}}, {"zero_point", Ints{-7}}})},
      {"quantize_saturating",
       "QuantizeLinear",
       {{{4, 9}, -3, 3}},
       MakeAttrs({{"scale", Floats{0.005f}}, {"zero_point", Ints{3}}})},
      {"quantize_per_axis",
       "QuantizeLinear",
       {{{3, 4, 2}, -2, 2}},
       MakeAttrs({{"scale", Floats{0.01f, 0.02f, 0.03f, 0.5f}},
                  {"zero_point", Ints{0, 5, -5, 127}},
                  {"axis", int64_t{1}}})},
      {"dequantize_per_tensor",
       "DequantizeLinear",
       {{{2, 3, 4}, -128, 127}},
       MakeAttrs({{"scale", Floats{0.031f}}, {"zero_point", Ints{12}}})},
      {"dequantize_per_axis",
       "DequantizeLinear",
       {{{4, 3, 2, 2}, -128, 127}},
       MakeAttrs({{"scale", Floats{0.1f, 0.02f, 0.003f, 4.f}},
                  {"zero_point", Ints{0, -1, 1, 0}},
                  {"axis", int64_t{0}}})},
      {"softmax_axis1",
       "Softmax",
       {{{2, 5, 3, 4}, -8, 8}},
       MakeAttrs({{"axis", int64_t{1}}})},
      {"softmax_axis0",
       "Softmax",
       {{{4, 3}}},
       MakeAttrs({{"axis", int64_t{0}}})},
      {"concat",
       "Concat",
       {{{2, 1, 3}}, {{2, 4, 3}}, {{2, 2, 3}}},
       MakeAttrs({{"axis", int64_t{1}}})},
      {"flatten",
       "Flatten",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"axis", int64_t{2}}})},
      {"reshape",
       "Reshape",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"shape", Ints{0, -1, 10}}})},
      {"transpose",
       "Transpose",
       {{{2, 3, 4, 5}}},
       MakeAttrs({{"perm", Ints{0, 2, 3, 1}}})},
      {"transpose_default", "Transpose", {{{2, 3, 4}}}, {}},
      {"slice",
       "Slice",
       {{{4, 5, 6}}},
       MakeAttrs({{"starts", Ints{-1, 1, big}},
                  {"ends", Ints{-big, 5, 0}},
                  {"axes", Ints{0, 1, 2}},
                  {"steps", Ints{-2, 2, -2}}})},
      {"slice_partial_axes",
       "Slice",
       {{{4, 5, 6}}},
       MakeAttrs({{"starts", Ints{1, -4}},
                  {"ends", Ints{-1, 100}},
                  {"axes", Ints{-1, 1}}})},
      {"split",
       "Split",
       {{{2, 6, 3}}},
       MakeAttrs({{"axis", int64_t{1}}, {"split", Ints{1, 3, 2}}}),
       3},
      {"pad_constant",
       "Pad",
       {{{1, 2, 3, 4}}},
       MakeAttrs({{"pads", Ints{0, 1, 2, 1, 0, 0, 1, 3}}, {"value", 0.5f}})},
      {"pad_reflect",
       "Pad",
       {{{1, 2, 4, 5}}},
       MakeAttrs(
           {{"pads", Ints{0, 0, 2, 3, 0, 0, 3, 4}}, {"mode", S("reflect")}})},
      {"pad_edge",
       "Pad",
       {{{1, 2, 3, 4}}},
       MakeAttrs(
           {{"pads", Ints{0, 1, 2, 0, 1, 0, 3, 2}}, {"mode", S("edge")}})},
      {"space_to_depth",
       "SpaceToDepth",
       {{{1, 3, 4, 6}}},
       MakeAttrs({{"blocksize", int64_t{2}}})},
      {"space_to_depth3",
       "SpaceToDepth",
       {{{2, 2, 6, 3}}},
       MakeAttrs({{"blocksize", int64_t{3}}})},
  };
}

json AttrsToJson(const Attrs& attrs) {
  json j = json::object();
  for (const auto& [k, v] : attrs.map()) {
    std::visit([&, k = k](const auto& x) { j[k] = x; }, v);
  }
  return j;
}

void WriteFloats(const std::filesystem::path& p, const std::vector<float>& v) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<double> ReadDoubles(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  std::vector<double> v(f ? static_cast<size_t>(f.tellg()) / sizeof(double)
                          : 0);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), v.size() * sizeof(double));
  return v;
}

TEST(RefOracleTest, MatchesPyTorch) {
  std::vector<Case> cases = ConvPoolCases();
  for (Case& c : OtherCases()) cases.push_back(std::move(c));

  std::string tmpl =
      (std::filesystem::temp_directory_path() / "shoal_ref_oracle_XXXXXX")
          .string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path dir(tmpl);

  // Inputs, kept for the C++ side, and the manifest.
  std::vector<std::vector<Tensor>> inputs(cases.size());
  json manifest = {{"cases", json::array()}};
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    json jin = json::array();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const In& spec = c.inputs[i];
      inputs[ci].push_back(
          Random(spec.shape, 1000 + 17 * ci + i, spec.lo, spec.hi));
      if (!spec.present) {
        jin.push_back(nullptr);
        continue;
      }
      const std::string file = c.id + ".in" + std::to_string(i) + ".bin";
      WriteFloats(dir / file, inputs[ci].back().data);
      jin.push_back({{"file", file}, {"shape", spec.shape}});
    }
    manifest["cases"].push_back({{"id", c.id},
                                 {"op", c.op},
                                 {"attrs", AttrsToJson(c.attrs)},
                                 {"inputs", jin},
                                 {"num_outputs", c.num_outputs}});
  }
  std::ofstream(dir / "manifest.json") << manifest.dump(1);

  const std::string cmd = std::string("/usr/bin/python3 ") + SHOAL_SOURCE_DIR +
                          "/test/py/ref_ops_oracle.py " + dir.string();
  const int rc = std::system(cmd.c_str());
  const int exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  if (exit_code == 77) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "PyTorch/numpy not importable by /usr/bin/python3";
  }
  ASSERT_EQ(exit_code, 0) << cmd;
  json result;
  std::ifstream(dir / "result.json") >> result;

  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    SCOPED_TRACE("case " + c.id);
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ins.push_back(c.inputs[i].present ? &inputs[ci][i] : nullptr);
    }
    auto got = RunRef(c.op, ins, c.attrs, c.num_outputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got.value().size(), result[c.id].size());
    for (size_t k = 0; k < got.value().size(); ++k) {
      const Tensor& y = got.value()[k];
      EXPECT_EQ(y.shape, result[c.id][k].get<Shape>()) << "output " << k;
      const std::vector<double> want =
          ReadDoubles(dir / (c.id + ".out" + std::to_string(k) + ".bin"));
      ASSERT_EQ(want.size(), y.data.size()) << "output " << k;
      int bad = 0;
      for (size_t i = 0; i < want.size() && bad < 5; ++i) {
        const double err = std::fabs(y.data[i] - want[i]);
        if (!(err <= 1e-5 * std::fabs(want[i]) + 1e-6)) {
          ADD_FAILURE() << "output " << k << " element " << i << ": "
                        << y.data[i] << ", PyTorch " << want[i];
          ++bad;
        }
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shoal
