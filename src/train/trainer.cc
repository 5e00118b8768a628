// TrainGraph and TorchForward: forwarded to the libtorch module, loaded on
// first use (see torch_module.h); and the paper's initial weights.
#include "train/trainer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>

#include "models/zoo.h"
#include "train/torch_module.h"

#ifndef SHOAL_TORCH_MODULE_PATH
#define SHOAL_TORCH_MODULE_PATH ""
#endif

namespace shoal {
namespace {

constexpr char kModuleFile[] = "libshoal_torch.so";

// $SHOAL_TORCH_MODULE, then beside the running binary, then where the
// package installs it (BIN/../lib/shoal), then the build directory this
// was compiled in.
std::vector<std::string> ModuleCandidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("SHOAL_TORCH_MODULE"); env && *env)
    c.push_back(env);
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    c.push_back((self.parent_path() / kModuleFile).string());
    c.push_back((self.parent_path().parent_path() / "lib/shoal" / kModuleFile)
                    .string());
  }
  if (*SHOAL_TORCH_MODULE_PATH) c.push_back(SHOAL_TORCH_MODULE_PATH);
  return c;
}

StatusOr<const TorchModuleApi*> LoadModule() {
  static std::mutex mu;
  static const TorchModuleApi* api = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (api) return api;
  std::string tried;
  for (const auto& path : ModuleCandidates()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += "\n  " + path + ": not found";
      continue;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      tried += "\n  " + path + ": " + dlerror();
      continue;
    }
    auto* get = reinterpret_cast<const TorchModuleApi* (*)()>(
        dlsym(h, "ShoalTorchModuleApi"));
    if (!get) {
      tried += "\n  " + path + ": no ShoalTorchModuleApi";
      continue;
    }
    const TorchModuleApi* a = get();
    if (!a || a->version != kTorchModuleVersion) {
      tried += "\n  " + path + ": built from other sources (version " +
               std::to_string(a ? a->version : -1) + ", expected " +
               std::to_string(kTorchModuleVersion) + ")";
      continue;
    }
    api = a;
    return api;
  }
#ifdef SHOAL_NO_TORCH
  // The arm64 build has no libtorch (docs/packaging.md): name the commands
  // and where to run them rather than a list of files that were never built.
  return FailedPrecondition(
      "this shoal was built without libtorch (-DSHOAL_TORCH=OFF, as the arm64 "
      "build is), and training needs it: `shoal lcp train` and `shoal lcp "
      "prune` run on a machine with the full build (amd64); copy the trained "
      ".onnx here, where every other command runs it");
#else
  return FailedPrecondition(
      "cannot load shoal's libtorch module (build target shoal_torch; or set "
      "SHOAL_TORCH_MODULE):" +
      tried);
#endif
}

// The inputs one output of a Conv/Gemm/MatMul sums over: a conv's input
// channels per group times its kernel, an fc layer's input features.
double FanIn(const Node& n, const Shape& w) {
  if (w.size() < 2) return 1;
  double fan = 1;
  if (n.op == "Conv") {
    for (size_t d = 1; d < w.size(); ++d) fan *= static_cast<double>(w[d]);
  } else if (n.op == "Gemm" && n.attrs.GetInt("transB", 0) != 0) {
    fan = static_cast<double>(w[1]);
  } else {
    fan =
        static_cast<double>(w[w.size() - 2]);  // Gemm [K, N], MatMul [.., K, N]
  }
  return std::max(1.0, fan);
}

}  // namespace

WeightStore InitialWeights(const Graph& g, double std, uint64_t seed) {
  WeightStore w = RandomWeights(g, seed);
  for (const auto& n : g.nodes) {
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      auto it = w.find(n.inputs[i]);
      if (it == w.end()) continue;
      auto& data = it->second.data;
      if (n.op == "Conv" || n.op == "Gemm" || n.op == "MatMul") {
        if (i == 1) {
          const double sd =
              std > 0 ? std : std::sqrt(2.0 / FanIn(n, it->second.shape));
          std::seed_seq seq{seed, std::hash<std::string>()(n.inputs[i])};
          std::mt19937_64 rng(seq);
          std::normal_distribution<float> normal(0.f, static_cast<float>(sd));
          for (auto& v : data) v = normal(rng);
        } else {
          std::fill(data.begin(), data.end(), 0.f);
        }
      } else if (n.op == "BatchNormalization") {
        std::fill(data.begin(), data.end(), i == 1 || i == 4 ? 1.f : 0.f);
      }
    }
  }
  return w;
}

StatusOr<TrainResult> TrainGraph(const Graph& g, const ImageDataset& data,
                                 const TrainOptions& o) {
  ASSIGN_OR_RETURN(const TorchModuleApi* api, LoadModule());
  return api->train(g, data, o);
}

StatusOr<std::vector<Tensor>> TorchForward(const Graph& g,
                                           const WeightStore& weights,
                                           const std::vector<Tensor>& inputs,
                                           bool batch_branches, bool* batched) {
  ASSIGN_OR_RETURN(const TorchModuleApi* api, LoadModule());
  return api->forward(g, weights, inputs, batch_branches, batched);
}

}  // namespace shoal
