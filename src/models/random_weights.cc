// Seeded weights for zoo models (no download needed to run any of them).
#include <cmath>
#include <cstdint>

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
        return Role{n.op, static_cast<int>(i),
                    n.attrs.GetInt("transB", 0) != 0};
  return {};
}

// SplitMix64 (Steele, Lea and Flood 2014): a well-mixed 64-bit generator
// whose outputs give two 24-bit uniform floats each. std::mt19937_64 through
// uniform_real_distribution<float> cost 16 ns a float: 1 s of CPU for
// AlexNet's 61 M weights, which a worker held to a Pi's share of a core
// (shoal profile builds every layer variant there) waited 23 s for.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t s_;
};

// Uniform in [lo, hi).
void Fill(Tensor* t, uint64_t seed, float lo, float hi) {
  SplitMix64 g(seed);
  const float step = (hi - lo) * 0x1.0p-24f;
  float* v = t->data.data();
  const size_t n = t->data.size();
  size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const uint64_t x = g.Next();
    v[i] = lo + static_cast<float>(x >> 40) * step;
    v[i + 1] = lo + static_cast<float>((x >> 8) & 0xFFFFFF) * step;
  }
  if (i < n) v[i] = lo + static_cast<float>(g.Next() >> 40) * step;
}

}  // namespace

WeightStore RandomWeights(const Graph& g, uint64_t seed) {
  WeightStore w;
  for (const auto& [name, info] : g.tensors) {
    if (!info.is_weight()) continue;
    Tensor t(info.shape);
    const uint64_t stream = Fnv1a(name, seed);  // one per tensor
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
      float bound =
          std::sqrt(6.0f / static_cast<float>(std::max<int64_t>(1, fan_in)));
      Fill(&t, stream, -bound, bound);
    } else if (role.op == "BatchNormalization") {
      if (role.slot == 1 || role.slot == 4)
        Fill(&t, stream, 0.5f, 1.5f);  // scale, var
      else
        Fill(&t, stream, -0.1f, 0.1f);  // bias, mean
    } else {
      Fill(&t, stream, -0.05f, 0.05f);  // biases and other constants
    }
    w.emplace(name, std::move(t));
  }
  return w;
}

}  // namespace shoal
