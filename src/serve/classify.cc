#include "serve/classify.h"

#include <algorithm>
#include <numeric>

#include "graph/shape.h"
#include "models/imagenet_classes.h"

namespace shoal {

StatusOr<std::vector<ClassScore>> TopClasses(
    const Tensor& y, int k, const std::vector<std::string>& names) {
  const bool classifier =
      (y.shape.size() == 2 && y.shape[0] == 1 && y.shape[1] > 1) ||
      (y.shape.size() == 1 && y.shape[0] > 1);
  if (!classifier) {
    return InvalidArgument("the model's output has shape " +
                           ShapeToString(y.shape) +
                           ", not a classifier's [1, N]: send the input as a "
                           "tensor to /v2/models/NAME/infer instead");
  }
  if (k < 1) return InvalidArgument("top_k must be at least 1");
  std::vector<int64_t> idx(y.data.size());
  std::iota(idx.begin(), idx.end(), 0);
  const size_t n = std::min<size_t>(k, idx.size());
  std::partial_sort(
      idx.begin(), idx.begin() + n, idx.end(), [&y](int64_t p, int64_t q) {
        return y.data[p] > y.data[q] || (y.data[p] == y.data[q] && p < q);
      });
  std::vector<ClassScore> out;
  for (size_t i = 0; i < n; ++i) {
    ClassScore c;
    c.index = idx[i];
    c.score = y.data[idx[i]];
    if (names.size() == y.data.size()) c.name = names[idx[i]];
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> KnownClassNames(int64_t n) {
  if (n != kImagenetClasses) return {};
  const auto& names = ImagenetClassNames();
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace shoal
