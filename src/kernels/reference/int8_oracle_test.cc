// Cross-checks the int8 kernels against PyTorch: seeded random int8 cases
// (any zero points, per-tensor and per-channel weights) go to a temp dir,
// test/py/int8_ops_oracle.py sums the centered products exactly (float64
// conv, int64 matmul) and scales them in float64. Ours is the same sum and
// expression rounded once to f32, so they agree to 2^-23 relative; a sum off
// by one would move the result by a whole scale step, far more.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/int8_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;   // NOLINT
using namespace int8_test;  // NOLINT
using nlohmann::json;

struct Case {
  std::string id, op;
  Shape x, w;
  bool bias;
  Attrs attrs;
  int64_t w_axis;  // -1: per tensor
};

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

json AttrsToJson(const Attrs& attrs) {
  json j = json::object();
  for (const auto& [k, v] : attrs.map())
    std::visit([&, k = k](const auto& x) { j[k] = x; }, v);
  return j;
}

TEST(Int8OracleTest, KernelsMatchPyTorchIntegerSums) {
  const std::vector<Case> cases = {
      {"conv2d_groups_pads",
       "Conv",
       {1, 6, 9, 8},
       {6, 3, 3, 3},
       true,
       MakeAttrs({{"group", int64_t{2}},
                  {"strides", Ints{2, 1}},
                  {"pads", Ints{1, 0, 2, 1}}}),
       0},
      {"conv2d_dilation_per_tensor",
       "Conv",
       {2, 3, 10, 10},
       {5, 3, 3, 3},
       false,
       MakeAttrs({{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}),
       -1},
      {"conv1d_depthwise",
       "Conv",
       {1, 4, 16},
       {4, 1, 5},
       true,
       MakeAttrs({{"group", int64_t{4}}, {"pads", Ints{2, 2}}}),
       0},
      {"gemm_transB",
       "Gemm",
       {4, 30},
       {12, 30},
       true,
       MakeAttrs({{"transB", int64_t{1}}}),
       0},
      {"gemm_kn", "Gemm", {3, 64}, {64, 9}, true, {}, 1},
      {"matmul_batched", "MatMul", {2, 3, 5, 7}, {7, 4}, false, {}, 1},
      {"matmul_both_batched", "MatMul", {3, 2, 6}, {3, 6, 5}, false, {}, -1},
  };
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "shoal_int8_oracle_XXXXXX")
          .string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path dir(tmpl);

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  std::uniform_int_distribution<int> zero(kInt8Min, kInt8Max);
  struct Inputs {
    Tensor xq, wq, bias;
    QuantParams xp, wp;
  };
  std::vector<Inputs> inputs;
  json manifest = {{"cases", json::array()}};
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    Inputs in;
    in.xq = RandomInt8(c.x, 500 + ci);
    in.wq = RandomInt8(c.w, 600 + ci);
    in.xp = Params({scale(rng)}, {zero(rng)});
    in.wp = Params({scale(rng)}, {zero(rng)});
    if (c.w_axis >= 0) {
      in.wp.scale.clear();
      in.wp.zero_point.clear();
      for (int64_t k = 0; k < c.w[c.w_axis]; ++k) {
        in.wp.scale.push_back(scale(rng));
        in.wp.zero_point.push_back(zero(rng));
      }
      in.wp.axis = c.w_axis;
    }
    WriteFloats(dir / (c.id + ".x.bin"), in.xq.data);
    WriteFloats(dir / (c.id + ".w.bin"), in.wq.data);
    json jbias = nullptr;
    if (c.bias) {
      in.bias = Random({c.w[c.w_axis]}, 700 + ci, -3.f, 3.f);
      WriteFloats(dir / (c.id + ".b.bin"), in.bias.data);
      jbias = {{"file", c.id + ".b.bin"}, {"shape", in.bias.shape}};
    }
    manifest["cases"].push_back({{"id", c.id},
                                 {"op", c.op},
                                 {"attrs", AttrsToJson(c.attrs)},
                                 {"x",
                                  {{"file", c.id + ".x.bin"},
                                   {"shape", c.x},
                                   {"scale", in.xp.scale},
                                   {"zero_point", in.xp.zero_point}}},
                                 {"w",
                                  {{"file", c.id + ".w.bin"},
                                   {"shape", c.w},
                                   {"scale", in.wp.scale},
                                   {"zero_point", in.wp.zero_point},
                                   {"axis", std::max<int64_t>(c.w_axis, 0)}}},
                                 {"bias", jbias}});
    inputs.push_back(std::move(in));
  }
  std::ofstream(dir / "manifest.json") << manifest.dump(1);

  const std::string cmd = std::string("/usr/bin/python3 ") + SHOAL_SOURCE_DIR +
                          "/test/py/int8_ops_oracle.py " + dir.string();
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
    const Inputs& in = inputs[ci];
    SCOPED_TRACE("case " + c.id);
    auto y = RunInt8(c.op, in.xq, in.xp, in.wq, in.wp,
                     c.bias ? &in.bias : nullptr, c.attrs);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->shape, result[c.id].get<Shape>());
    const std::vector<double> want = ReadDoubles(dir / (c.id + ".y.bin"));
    ASSERT_EQ(want.size(), y->data.size());
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; ++i) {
      const double err = std::fabs(y->data[i] - want[i]);
      if (!(err <= std::ldexp(std::fabs(want[i]), -23) + 1e-30)) {
        ADD_FAILURE() << "element " << i << ": " << y->data[i] << ", PyTorch "
                      << want[i];
        ++bad;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shoal
