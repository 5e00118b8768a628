// `shoal infer` as a user runs it (the binary, not in-process): inputs it
// cannot use end with a non-zero exit and a message naming the file and
// what is wrong with it.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "io/npy.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string Infer(const std::string& args) {
  return std::string(SHOAL_BINARY) + " infer lenet5 " + args;
}

// A float64 .npy (version 1.0) of `shape`, zeros, written by hand as numpy
// would.
void WriteFloat64Npy(const std::string& path, const std::string& shape,
                     int64_t elements) {
  std::string dict =
      "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(dict.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << dict;
  f << std::string(elements * 8, '\0');
}

TEST(InferCmd, RunsAndWritesTheOutput) {
  TempDir dir;
  const std::string x = dir.File("x.npy"), y = dir.File("y.npy");
  ASSERT_TRUE(WriteNpy(x, Tensor({1, 1, 28, 28})).ok());
  std::string out;
  ASSERT_EQ(RunCommand(Infer("--input " + x + " --output " + y), &out), 0)
      << out;
  auto t = ReadNpy(y);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->shape, (Shape{1, 10}));
}

// --dtype int8 runs the model quantized: a quarter of the weight bytes,
// and an output close to the f32 one.
TEST(InferCmd, Int8HoldsAQuarterOfTheWeights) {
  TempDir dir;
  Tensor samples({4, 1, 28, 28});
  for (size_t i = 0; i < samples.data.size(); ++i)
    samples.data[i] = static_cast<float>(i % 89) / 88.f;
  const std::string cal = dir.File("cal.npy");
  ASSERT_TRUE(WriteNpy(cal, samples).ok());
  std::string f32, int8;
  ASSERT_EQ(RunCommand(Infer("--input-seed 1 --json"), &f32), 0) << f32;
  ASSERT_EQ(RunCommand(Infer("--input-seed 1 --json --dtype int8 "
                             "--calibration " +
                             cal),
                       &int8),
            0)
      << int8;
  const auto a = nlohmann::json::parse(f32.substr(f32.find('{')));
  const auto b = nlohmann::json::parse(int8.substr(int8.find('{')));
  EXPECT_EQ(b.at("dtype"), "int8");
  const double ratio =
      b.at("weight_bytes").get<double>() / a.at("weight_bytes").get<double>();
  EXPECT_GT(ratio, 0.24);
  EXPECT_LT(ratio, 0.30);
  std::string bad;
  EXPECT_NE(RunCommand(Infer("--dtype int4"), &bad), 0);
}

// --profile: every op of the model has its time and kernel; the ops' times
// add up to the total, and the slowest steps are listed, slowest first.
TEST(InferCmd, ProfileGivesTimeByOpAndKernel) {
  std::string out;
  ASSERT_EQ(RunCommand(Infer("--repeat 2 --profile --top 3 --json"), &out), 0)
      << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  const auto& p = j.at("profile");
  EXPECT_EQ(p.at("runs"), 2);
  double sum = 0;
  bool conv = false;
  for (const auto& r : p.at("ops")) {
    sum += r.at("ms").get<double>();
    const std::string op = r.at("op");
    if (op.rfind("Conv", 0) == 0) conv = r.at("kernel") == "onednn";
  }
  EXPECT_TRUE(conv) << p.dump();
  EXPECT_NEAR(sum, p.at("total_ms").get<double>(), 1e-6);
  ASSERT_EQ(p.at("slowest_steps").size(), 3u);
  EXPECT_GE(p["slowest_steps"][0]["ms"].get<double>(),
            p["slowest_steps"][2]["ms"].get<double>());
  ASSERT_EQ(RunCommand(Infer("--profile --top 2"), &out), 0) << out;
  EXPECT_NE(out.find("time by op"), std::string::npos) << out;
  EXPECT_NE(out.find("slowest 2 steps"), std::string::npos) << out;
}

// 1000 scores are ImageNet's classes: named. A zoo model's weights are
// seeded random ones, and the output says the classes mean nothing.
TEST(InferCmd, NamesImagenetClassesAndSaysWeightsAreRandom) {
  std::string out;
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) +
                           " infer mobilenet-v1 --input-seed 1",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("ImageNet name"), std::string::npos) << out;
  EXPECT_NE(out.find("seeded random weights"), std::string::npos) << out;
  // A 10-class model's classes are indices only.
  std::string lenet;
  ASSERT_EQ(RunCommand(Infer("--input-seed 1"), &lenet), 0) << lenet;
  EXPECT_EQ(lenet.find("ImageNet"), std::string::npos) << lenet;
}

TEST(InferCmd, WrongInputShapeNamesFileAndShapes) {
  TempDir dir;
  const std::string x = dir.File("wrong_shape.npy");
  ASSERT_TRUE(WriteNpy(x, Tensor({1, 1, 32, 32})).ok());
  std::string out;
  EXPECT_NE(RunCommand(Infer("--input " + x), &out), 0);
  EXPECT_NE(out.find("wrong_shape.npy"), std::string::npos) << out;
  EXPECT_NE(out.find("1x1x32x32"), std::string::npos) << out;
  EXPECT_NE(out.find("1x1x28x28"), std::string::npos) << out;
}

TEST(InferCmd, Float64InputNamesFileAndDtype) {
  TempDir dir;
  const std::string x = dir.File("doubles.npy");
  WriteFloat64Npy(x, "(1, 1, 28, 28)", 28 * 28);
  std::string out;
  EXPECT_NE(RunCommand(Infer("--input " + x), &out), 0);
  EXPECT_NE(out.find("doubles.npy"), std::string::npos) << out;
  EXPECT_NE(out.find("<f8"), std::string::npos) << out;
  EXPECT_NE(out.find("float32"), std::string::npos) << out;
}

TEST(InferCmd, UnreadableImageNamesFile) {
  TempDir dir;
  const std::string img = dir.File("garbage.png");
  std::ofstream(img) << "not an image at all";
  std::string out;
  EXPECT_NE(RunCommand(Infer("--image " + img), &out), 0);
  EXPECT_NE(out.find("garbage.png"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot read image"), std::string::npos) << out;

  // A PNM that ends early: stb's decoder would read past its buffer, so
  // only PNG, JPEG and BMP reach it.
  const std::string pnm = dir.File("short.pgm");
  std::ofstream(pnm) << "P5\n5 25055\n5555";
  out.clear();
  EXPECT_NE(RunCommand(Infer("--image " + pnm), &out), 0);
  EXPECT_NE(out.find("short.pgm"), std::string::npos) << out;
  EXPECT_NE(out.find("not a PNG, JPEG or BMP"), std::string::npos) << out;

  out.clear();
  EXPECT_NE(RunCommand(Infer("--image " + dir.File("missing.jpg")), &out), 0);
  EXPECT_NE(out.find("missing.jpg"), std::string::npos) << out;
}

TEST(InferCmd, MissingNpyNamesFile) {
  TempDir dir;
  std::string out;
  EXPECT_NE(RunCommand(Infer("--input " + dir.File("absent.npy")), &out), 0);
  EXPECT_NE(out.find("absent.npy"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
