#include "graph/tensor_diff.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal {

TensorDiff DiffTensors(const Tensor& got, const Tensor& want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (got.shape != want.shape || got.data.size() != want.data.size()) {
    return {kInf, kInf};
  }
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double d = std::fabs(double(got.data[i]) - want.data[i]);
    // std::max would skip a NaN and report the output as close.
    if (std::isnan(d)) return {kInf, kInf};
    diff = std::max(diff, d);
    scale = std::max(scale, std::fabs(double(want.data[i])));
  }
  return {diff, scale > 0 ? diff / scale : diff};
}

double MaxRelDiff(const Tensor& got, const Tensor& want) {
  return DiffTensors(got, want).max_rel;
}

}  // namespace shoal
