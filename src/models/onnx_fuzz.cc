// libFuzzer target: bytes -> ONNX ModelProto -> import (operators,
// attributes, initializers, constant folding) -> graph verifier, with
// weights loaded. External data resolves under an empty directory: a
// model naming files reads nothing.
// SHOAL_FUZZ_WRITE_SEEDS=DIR writes small models, made with the zoo's
// builder and exported by shoal's ONNX writer, to DIR.
#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "models/builder.h"
#include "models/zoo.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"

namespace {

std::string* base_dir = nullptr;

shoal::StatusOr<shoal::Graph> ConvNet() {
  shoal::GraphBuilder b("convnet");
  auto x = b.Input("input", {1, 3, 8, 8});
  x = b.Relu(b.BatchNorm("bn1", b.Conv("conv1", x, 4, 3, 1, 1)));
  x = b.MaxPool(x, {2}, {2});
  x = b.Flatten(x);
  x = b.Softmax(b.Linear("fc", x, 5));
  return b.Finish({x});
}

shoal::StatusOr<shoal::Graph> Branches() {
  shoal::GraphBuilder b("branches");
  auto x = b.Input("input", {1, 4, 6, 6});
  auto a = b.HardSwish(b.Conv("dw", x, 4, 3, 1, 1, /*group=*/4));
  auto c = b.Sigmoid(b.Conv("pw", x, 4, 1));
  auto y = b.Concat({b.Add(a, c), b.Mul(a, c)}, 1);
  y = b.Clip(b.LeakyRelu(y, 0.1f), -1, 1);
  y = b.AvgPool(y, {3}, {2}, {1});
  y = b.Lrn(y, 3, 1e-4f, 0.75f, 1);
  y = b.GlobalAvgPool(b.SpaceToDepth(y, 1));
  return b.Finish({b.Dropout(b.Flatten(y))});
}

void WriteSeeds(const std::string& dir) {
  for (auto g : {ConvNet(), Branches()}) {
    if (!g.ok()) abort();
    shoal::Model m{*g, shoal::RandomWeights(*g, 1)};
    const std::string name = dir + "/" + m.graph.name;
    if (!shoal::ExportOnnx(m, name + ".onnx").ok()) abort();
    m.weights.clear();
    if (!shoal::ExportOnnx(m, name + "-noweights.onnx").ok()) abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("SHOAL_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  char tmpl[] = "/tmp/shoal-fuzz-onnx-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) abort();
  base_dir = new std::string(tmpl);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) return 0;
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return 0;
  shoal::OnnxImportOptions opts;
  opts.load_weights = true;
  if (!shoal::ImportOnnxModel(model, "fuzz.onnx", *base_dir, opts).ok()) {
    return 0;
  }
  // A model that imports goes through BatchNormalization folding too.
  opts.fuse_batchnorm = true;
  (void)shoal::ImportOnnxModel(model, "fuzz.onnx", *base_dir, opts);
  return 0;
}
