// The answer of the image route of `shoal serve --http` (POST
// /v1/models/{name}/classify): the k highest scores of a classifier's
// output, with the class names where the model has them.
#ifndef SHOAL_SERVE_CLASSIFY_H_
#define SHOAL_SERVE_CLASSIFY_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct ClassScore {
  int64_t index = 0;
  float score = 0;
  std::string name;  // "" when the model has no names
};

// The `k` largest of a classifier's output (shape [1, N] or [N], N > 1),
// largest first, ties by index; names[i] names class i when `names` has N
// entries. Another output is an error naming its shape.
StatusOr<std::vector<ClassScore>> TopClasses(
    const Tensor& y, int k, const std::vector<std::string>& names);

// The names of a classifier's N classes that shoal knows: ImageNet's for
// N = 1000, else none.
std::vector<std::string> KnownClassNames(int64_t n);

}  // namespace shoal

#endif  // SHOAL_SERVE_CLASSIFY_H_
