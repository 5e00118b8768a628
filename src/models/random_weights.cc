// Seeded weights for zoo models (no download needed to run any of them).
#include <cmath>
#include <random>

#include "models/zoo.h"

namespace shoal {
namespace {

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// How a weight is used decides its scale: the first node reading it names
// the op and the input slot.
struct Role {
  std::string op;
  int slot = -1;
  bool transB = false;
};

Role RoleOf(const Graph& g, const std::string& tensor) {
  for (const auto& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] == tensor)
        return Role{n.op, static_cast<int>(i), n.attrs.GetInt("transB", 0) != 0};
  return {};
}

void Fill(Tensor* t, std::mt19937_64* rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  for (auto& v : t->data) v = d(*rng);
}

}  // namespace

WeightStore RandomWeights(const Graph& g, uint64_t seed) {
  WeightStore w;
  for (const auto& [name, info] : g.tensors) {
    if (!info.is_weight()) continue;
    Tensor t(info.shape);
    std::mt19937_64 rng(Fnv1a(name, seed));
    Role role = RoleOf(g, name);
    const Shape& s = info.shape;
    if ((role.op == "Conv" || role.op == "Gemm" || role.op == "MatMul") &&
        role.slot == 1) {
      int64_t fan_in = 1;
      if (role.op == "Conv") {
        for (size_t i = 1; i < s.size(); ++i) fan_in *= s[i];
      } else if (role.op == "Gemm") {
        fan_in = role.transB ? s[1] : s[0];
      } else {
        fan_in = s.size() >= 2 ? s[s.size() - 2] : s[0];
      }
      // He-uniform: keeps the variance of ReLU networks roughly constant.
      float bound = std::sqrt(6.0f / static_cast<float>(std::max<int64_t>(1, fan_in)));
      Fill(&t, &rng, -bound, bound);
    } else if (role.op == "BatchNormalization") {
      if (role.slot == 1 || role.slot == 4) Fill(&t, &rng, 0.5f, 1.5f);  // scale, var
      else Fill(&t, &rng, -0.1f, 0.1f);  // bias, mean
    } else {
      Fill(&t, &rng, -0.05f, 0.05f);  // biases and other constants
    }
    w.emplace(name, std::move(t));
  }
  return w;
}

}  // namespace shoal
