// Views of plain (row-major, dense) f32 tensors handed to kernels.
#ifndef SHOAL_KERNELS_TENSOR_VIEW_H_
#define SHOAL_KERNELS_TENSOR_VIEW_H_

#include "graph/shape.h"

namespace shoal {

struct ConstView {
  const float* data = nullptr;  // nullptr: an absent optional input
  Shape shape;
  bool present() const { return data != nullptr; }
  int64_t size() const { return NumElements(shape); }
};

struct MutView {
  float* data = nullptr;
  Shape shape;
  int64_t size() const { return NumElements(shape); }
};

}  // namespace shoal

#endif  // SHOAL_KERNELS_TENSOR_VIEW_H_
