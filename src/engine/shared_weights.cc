#include "engine/shared_weights.h"

#include "engine/exec_builder.h"
#include "engine/xnnpack/xnn_step.h"

namespace shoal {

SharedWeights::SharedWeights() : impl_(std::make_unique<Impl>()) {}
SharedWeights::~SharedWeights() = default;

int64_t SharedWeights::bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->bytes;
}

int SharedWeights::copies() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int n = 0;
  for (const auto& [key, copies] : impl_->by_key)
    n += static_cast<int>(copies.size());
  return n + static_cast<int>(impl_->xnn_ops.size());
}

}  // namespace shoal
