// The names of the 1000 ImageNet classes, in the order the zoo's classifiers
// and torchvision's output them, so that `shoal infer` can say "tabby cat"
// instead of 281.
#ifndef SHOAL_MODELS_IMAGENET_CLASSES_H_
#define SHOAL_MODELS_IMAGENET_CLASSES_H_

#include <array>
#include <cstddef>

namespace shoal {

constexpr std::size_t kImagenetClasses = 1000;

const std::array<const char*, kImagenetClasses>& ImagenetClassNames();

}  // namespace shoal

#endif  // SHOAL_MODELS_IMAGENET_CLASSES_H_
