// Training an LCP model fast: its K branches are K copies of one layer
// sequence, each narrow (LeNet-split8's conv1 has one channel), and running
// them one by one costs K small ops per layer where libtorch's per-op
// overhead dominates (measured: 8 one-channel 5x5 convs on 128 images take
// 8x the time of one 8-channel conv). BatchedBranches runs the K copies of
// a layer as one op: branch tensors live side by side on axis 1 (branch k's
// channels or features at [k*C, (k+1)*C)), the first layer's weights are
// concatenated, later convs become grouped (K times the groups), fc layers
// one batched matmul. Weights stay per branch, so gradients, export and the
// engine see the graph unchanged. Internal to src/train (libtorch headers).
#ifndef SHOAL_TRAIN_TORCH_BRANCHES_H_
#define SHOAL_TRAIN_TORCH_BRANCHES_H_

#include <torch/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

class BatchedBranches {
 public:
  // Fails, saying why, when `g` has no branches b0/ ... b<K-1>/ that are
  // copies of one another reading only the graph inputs, or a branch holds
  // an op this runner does not batch; the caller then runs node by node.
  static StatusOr<std::unique_ptr<BatchedBranches>> Create(const Graph& g);
  ~BatchedBranches();

  int64_t branches() const { return k_; }
  // Every node of every branch (run here, not by the node-by-node steps).
  const std::set<std::string>& nodes() const { return nodes_; }

  // Runs the branches on the graph inputs and returns, by name, each branch
  // tensor that a node outside the branches (or the graph output) reads.
  // In training, BatchNormalization's running statistics are updated in
  // `weights`.
  Status Run(const std::map<std::string, torch::Tensor>& inputs,
             const std::map<std::string, torch::Tensor>& weights, bool training,
             std::map<std::string, torch::Tensor>* out) const;

  struct Step;

 private:
  BatchedBranches() = default;
  int64_t k_ = 0;
  std::set<std::string> nodes_;
  std::vector<std::unique_ptr<Step>> steps_;
  struct Slice {
    int slot;      // of the batched tensor
    int64_t k, c;  // branch k's part: [k*c, (k+1)*c) on axis 1
  };
  // Branch-0 tensor -> its batched slot (k = 0) and per-branch extent.
  std::map<std::string, Slice> tensors_;
  int slots_ = 0;
  // What Run returns: b<k>/T -> its part of b0/T's batched tensor.
  std::map<std::string, Slice> exported_;
};

}  // namespace shoal

#endif  // SHOAL_TRAIN_TORCH_BRANCHES_H_
