// Weights in the layouts oneDNN chose, shared by the executors of one
// process. A plan often gives a device several tasks that read the same
// weights: a spatial strip is cut into its interior and the edges that
// wait for a neighbour's halo, all three running the layer's whole kernel.
// Each executor reorders its weights into a copy of its own, so a device
// held every such layer's weights three times while the planner's memory
// rule (and the worker's budget check) counts each once. Executors given
// the same SharedWeights, and told what each weight's data is (a blob
// hash, a model weight's slice), reuse a copy of the same data in the same
// layout instead of making another.
#ifndef SHOAL_ENGINE_SHARED_WEIGHTS_H_
#define SHOAL_ENGINE_SHARED_WEIGHTS_H_

#include <cstdint>
#include <memory>

namespace shoal {

class SharedWeights {
 public:
  SharedWeights();
  ~SharedWeights();
  SharedWeights(const SharedWeights&) = delete;
  SharedWeights& operator=(const SharedWeights&) = delete;

  // Bytes of the distinct copies held, and how many there are.
  int64_t bytes() const;
  int copies() const;

  struct Impl;  // engine/exec_builder.h: the copies, by data and layout
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_ENGINE_SHARED_WEIGHTS_H_
