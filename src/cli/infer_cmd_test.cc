// `shoal infer` as a user runs it (the binary, not in-process): inputs it
// cannot use end with a non-zero exit and a message naming the file and
// what is wrong with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "io/image_metadata.h"
#include "io/image_write.h"
#include "io/npy.h"
#include "models/load_model.h"
#include "onnx/onnx_metadata.h"
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
  // Where oneDNN's int8 sums are exact; elsewhere the int8 values are
  // summed in f32, from f32 weights (engine/int8_path.h).
  const double ratio =
      b.at("weight_bytes").get<double>() / a.at("weight_bytes").get<double>();
  EXPECT_EQ(b.at("int8").at("layers"), 5);
  if (b.at("int8").at("path") == "int8 primitives") {
    EXPECT_GT(ratio, 0.24);
    EXPECT_LT(ratio, 0.30);
  } else {
    EXPECT_EQ(b.at("int8").at("path"), "f32 sums") << b.dump();
    EXPECT_GT(ratio, 0.99);
    EXPECT_LT(ratio, 1.05);
  }
  std::string bad;
  EXPECT_NE(RunCommand(Infer("--dtype int4"), &bad), 0);
}

// A QDQ model written by `shoal quantize` is int8 when loaded: infer says
// so without --dtype int8, in its text and its JSON.
TEST(InferCmd, QuantizedFileReportsInt8) {
  TempDir dir;
  Tensor samples({4, 1, 28, 28});
  for (size_t i = 0; i < samples.data.size(); ++i)
    samples.data[i] = static_cast<float>(i % 83) / 82.f;
  const std::string cal = dir.File("cal.npy"), q = dir.File("l8.onnx");
  ASSERT_TRUE(WriteNpy(cal, samples).ok());
  const std::string shoal = SHOAL_BINARY;
  // RunCommand appends, so each command has its own output.
  std::string quantized, json, text, f32;
  ASSERT_EQ(
      RunCommand(shoal + " quantize lenet5 --calibration " + cal + " -o " + q,
                 &quantized),
      0)
      << quantized;
  ASSERT_EQ(RunCommand(shoal + " infer " + q + " --json", &json), 0) << json;
  EXPECT_EQ(nlohmann::json::parse(json.substr(json.find('{'))).at("dtype"),
            "int8")
      << json;
  ASSERT_EQ(RunCommand(shoal + " infer " + q, &text), 0) << text;
  EXPECT_NE(text.find("model lenet5, int8, backend"), std::string::npos)
      << text;
  ASSERT_EQ(RunCommand(Infer("--json"), &f32), 0) << f32;
  EXPECT_EQ(nlohmann::json::parse(f32.substr(f32.find('{'))).at("dtype"), "f32")
      << f32;
}

// oneDNN limited to AVX2 (no VNNI, whose int8 sums saturate): on x86 the
// int8 layers are summed in f32, and the output is the reference int8
// kernels' (exact integer sums) to float rounding. On this CPU's own ISA
// too, whichever path it takes.
TEST(InferCmd, Int8IsExactOnAvx2AndOnThisCpu) {
  TempDir dir;
  const std::string want = dir.File("want.npy");
  std::string out;
  const std::string args = "--input-seed 3 --dtype int8 --json --output ";
  ASSERT_EQ(RunCommand(Infer(args + want + " --backend reference"), &out), 0)
      << out;
  const auto ref = ReadNpy(want);
  ASSERT_TRUE(ref.ok());
  for (const std::string env : {"ONEDNN_MAX_CPU_ISA=AVX2 ", ""}) {
    SCOPED_TRACE(env.empty() ? "this CPU's ISA" : env);
    const std::string got = dir.File("got.npy");
    out.clear();
    ASSERT_EQ(RunCommand(env + Infer(args + got), &out), 0) << out;
    const auto j = nlohmann::json::parse(out.substr(out.find('{')));
#if defined(__x86_64__)
    if (!env.empty()) {
      EXPECT_EQ(j.at("int8").at("path"), "f32 sums");
    }
#endif
    const auto y = ReadNpy(got);
    ASSERT_TRUE(y.ok());
    ASSERT_EQ(y->shape, ref->shape);
    float scale = 0;
    for (float v : ref->data) scale = std::max(scale, std::fabs(v));
    for (int64_t i = 0; i < y->size(); ++i)
      EXPECT_NEAR(y->data[i], ref->data[i], 1e-4f * scale) << i;
  }
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

// --backend xnnpack: the profile names the kernel of each op (CifarNet's
// LRN has no XNNPACK operator: the reference kernel runs it), and the
// output is the reference backend's.
TEST(InferCmd, XnnpackProfileNamesTheKernelOfEachOp) {
  TempDir dir;
  const std::string got = dir.File("xnn.npy"), want = dir.File("ref.npy");
  const std::string cifarnet =
      std::string(SHOAL_BINARY) + " infer cifarnet --input-seed 2 ";
  std::string out;
  ASSERT_EQ(RunCommand(cifarnet +
                           "--backend xnnpack --profile --json "
                           "--output " +
                           got,
                       &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.at("backend"), "xnnpack");
  std::map<std::string, std::string> kernel;
  for (const auto& r : j.at("profile").at("ops"))
    kernel[r.at("op")] = r.at("kernel");
  EXPECT_EQ(kernel["Conv+Relu"], "xnnpack") << out;
  EXPECT_EQ(kernel["MaxPool"], "xnnpack") << out;
  EXPECT_EQ(kernel["Gemm"], "xnnpack") << out;
  EXPECT_EQ(kernel["LRN"], "reference") << out;
  ASSERT_EQ(RunCommand(cifarnet + "--backend reference --output " + want, &out),
            0)
      << out;
  const auto y = ReadNpy(got), ref = ReadNpy(want);
  ASSERT_TRUE(y.ok() && ref.ok());
  ASSERT_EQ(y->shape, ref->shape);
  float scale = 0;
  for (float v : ref->data) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < y->size(); ++i)
    EXPECT_NEAR(y->data[i], ref->data[i], 1e-4f * scale) << i;
}

// A quantized model on --backend xnnpack: infer says which path each int8
// layer took (LeNet-5's convs and fc1 on qc8, fc2, the output, on f32
// sums), the profile names them, and `shoal kernels` lists each node's.
TEST(InferCmd, XnnpackInt8NamesTheQc8AndF32SumsLayers) {
  TempDir dir;
  Tensor samples({4, 1, 28, 28});
  for (size_t i = 0; i < samples.data.size(); ++i)
    samples.data[i] = static_cast<float>(i % 79) / 78.f;
  const std::string cal = dir.File("cal.npy"), q = dir.File("l8.onnx");
  ASSERT_TRUE(WriteNpy(cal, samples).ok());
  const std::string shoal = SHOAL_BINARY;
  std::string out, json, text, kernels;
  ASSERT_EQ(
      RunCommand(shoal + " quantize lenet5 --calibration " + cal + " -o " + q,
                 &out),
      0)
      << out;
  ASSERT_EQ(
      RunCommand(shoal + " infer " + q + " --backend xnnpack --profile --json",
                 &json),
      0)
      << json;
  const auto j = nlohmann::json::parse(json.substr(json.find('{')));
  const auto& i8 = j.at("int8");
  EXPECT_EQ(i8.at("layers"), 5) << json;
  EXPECT_EQ(i8.at("qc8"), 4) << json;
  EXPECT_EQ(i8.at("f32_sums"), 1) << json;
  EXPECT_EQ(i8.at("path"), "xnnpack qc8 + f32 sums") << json;
  EXPECT_EQ(j.at("profile").at("int8_path"), "xnnpack qc8 + f32 sums");
  std::map<std::string, std::string> kernel;
  for (const auto& r : j.at("profile").at("ops"))
    kernel[r.at("op")] = r.at("kernel");
  EXPECT_EQ(kernel["Conv+Relu"], "xnnpack qc8") << json;
  EXPECT_EQ(kernel["Gemm"], "xnnpack f32-sums") << json;
  EXPECT_EQ(kernel["MaxPool"], "xnnpack s8") << json;
  ASSERT_EQ(RunCommand(shoal + " infer " + q + " --backend xnnpack", &text), 0)
      << text;
  EXPECT_NE(text.find("int8 layers on XNNPACK: 5, 4 qc8 and 1 f32 sums"),
            std::string::npos)
      << text;
  ASSERT_EQ(RunCommand(shoal + " kernels " + q + " --backend xnnpack --json",
                       &kernels),
            0)
      << kernels;
  const auto k = nlohmann::json::parse(kernels.substr(kernels.find('{')));
  std::map<std::string, std::string> impl;
  for (const auto& n : k.at("nodes"))
    impl[n.at("node")] = n.at("kernel").get<std::string>() + " " +
                         n.at("impl").get<std::string>();
  EXPECT_EQ(impl["conv1"], "xnnpack qc8") << kernels;
  EXPECT_EQ(impl["fc1"], "xnnpack qc8") << kernels;
  EXPECT_EQ(impl["fc2"], "xnnpack f32-sums") << kernels;
  EXPECT_EQ(k.at("macs_by_kernel").at("xnnpack"), k.at("macs")) << kernels;
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

// A model file that names its classes and states its normalization (what
// `shoal lcp train` writes): `infer --image` prints its names and feeds
// the image its way, as --mean/--std would; the flags still win.
TEST(InferCmd, ImageUsesTheModelsOwnNamesAndNormalization) {
  TempDir dir;
  LoadOptions lo;
  lo.with_weights = true;
  lo.seed = 3;
  const Model m = LoadModel("lenet5", lo).value();
  ModelMetadata md;
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("kind-" + std::to_string(i));
  SetClassNames(names, &md);
  ImageNormalization norm;
  norm.mean = {0.25f};
  norm.std = {2.f};
  SetImageNormalization(norm, &md);
  const std::string named = dir.File("named.onnx"), plain = dir.File("p.onnx");
  ASSERT_TRUE(ExportOnnxWithMetadata(m, md, named).ok());
  ASSERT_TRUE(ExportOnnxWithMetadata(m, {}, plain).ok());
  std::vector<uint8_t> px(28 * 28);
  for (size_t i = 0; i < px.size(); ++i) px[i] = (i * 29) % 256;
  const std::string png = dir.File("x.png");
  ASSERT_TRUE(WritePng(png, 28, 28, 1, px.data()).ok());

  auto infer = [&](const std::string& model, const std::string& flags,
                   const std::string& npy, std::string* out) {
    return RunCommand(std::string(SHOAL_BINARY) + " infer " + model +
                          " --image " + png + " --output " + dir.File(npy) +
                          " " + flags,
                      out);
  };
  std::string own, by_flags, plain_default, overridden;
  ASSERT_EQ(infer(named, "", "own.npy", &own), 0) << own;
  ASSERT_EQ(infer(plain, "--mean 0.25 --std 2", "flags.npy", &by_flags), 0)
      << by_flags;
  ASSERT_EQ(infer(plain, "", "plain.npy", &plain_default), 0);
  ASSERT_EQ(infer(named, "--mean 0.5 --std 0.5", "over.npy", &overridden), 0);
  const Tensor y_own = ReadNpy(dir.File("own.npy")).value();
  EXPECT_EQ(y_own.data, ReadNpy(dir.File("flags.npy")).value().data);
  // Without metadata a gray image is normalised 0.5/0.5, and the flags
  // override the metadata.
  const Tensor y_plain = ReadNpy(dir.File("plain.npy")).value();
  EXPECT_NE(y_own.data, y_plain.data);
  EXPECT_EQ(ReadNpy(dir.File("over.npy")).value().data, y_plain.data);

  const size_t best = std::max_element(y_own.data.begin(), y_own.data.end()) -
                      y_own.data.begin();
  EXPECT_NE(own.find("the model's name"), std::string::npos) << own;
  EXPECT_NE(own.find(" " + names[best] + ": "), std::string::npos) << own;
  EXPECT_EQ(plain_default.find("kind-"), std::string::npos) << plain_default;
  std::string js;
  ASSERT_EQ(infer(named, "--json", "j.npy", &js), 0) << js;
  const auto j = nlohmann::json::parse(js.substr(js.find('{')));
  ASSERT_EQ(j["top_classes"].size(), 5u) << js;
  EXPECT_EQ(j["top_classes"][0]["index"], best);
  EXPECT_EQ(j["top_classes"][0]["name"], names[best]);

  // Metadata that cannot be read is an error naming the file and the key.
  ASSERT_TRUE(
      ExportOnnxWithMetadata(m, {{kImageMeanKey, "0"}}, dir.File("bad.onnx"))
          .ok());
  std::string bad;
  EXPECT_NE(infer(dir.File("bad.onnx"), "", "bad.npy", &bad), 0);
  EXPECT_NE(bad.find("bad.onnx"), std::string::npos) << bad;
  EXPECT_NE(bad.find(kImageStdKey), std::string::npos) << bad;
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
