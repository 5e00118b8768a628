// A shoal graph as a libtorch computation: one torch op per graph node, run
// in graph order with the batch on axis 0, the weights as trainable tensors.
// Internal to src/train (it includes libtorch's slow headers); the rest of
// shoal uses train/trainer.h.
#ifndef SHOAL_TRAIN_TORCH_GRAPH_H_
#define SHOAL_TRAIN_TORCH_GRAPH_H_

#include <torch/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

class BatchedBranches;

// One node's computation: its inputs (an absent optional one undefined) to
// its outputs, in training mode or not.
using TorchKernel = std::function<std::vector<torch::Tensor>(
    const std::vector<torch::Tensor>&, bool training)>;

// The kernel of `n`; Unsupported, naming the node and its op, when the
// interpreter does not implement it.
StatusOr<TorchKernel> BuildTorchKernel(const Graph& g, const Node& n);

class TorchGraph {
 public:
  // Fails, naming the node, on an op the interpreter does not implement or
  // an attribute value it cannot honour. `weights` must hold every weight.
  // With `batch_branches`, an LCP model's K branches run as one K-times
  // wider computation (BatchedBranches) when their structure allows.
  static StatusOr<std::unique_ptr<TorchGraph>> Create(
      const Graph& g, const WeightStore& weights, bool batch_branches = true);
  ~TorchGraph();

  // Runs the graph on `inputs` (graph input order, any batch on axis 0) and
  // returns the tensors named in `wanted` (graph outputs when empty).
  StatusOr<std::vector<torch::Tensor>> Forward(
      const std::vector<torch::Tensor>& inputs,
      const std::vector<std::string>& wanted = {});

  // Training mode: Dropout drops, BatchNormalization uses and updates batch
  // statistics. Off after Create.
  void SetTraining(bool on) { training_ = on; }
  bool training() const { return training_; }

  // Learned weights (requires_grad): those L2 weight decay applies to (conv,
  // fc and matmul weights) and the rest (biases, BN scale and shift).
  std::vector<torch::Tensor> DecayedParameters() const;
  std::vector<torch::Tensor> OtherParameters() const;

  // Every weight (BN running statistics included) as plain data.
  WeightStore ExportWeights() const;

  const Graph& graph() const { return g_; }
  // Whether the branches run batched; otherwise why not (empty if the graph
  // has no branches).
  bool branches_batched() const { return batched_ != nullptr; }
  const std::string& why_not_batched() const { return why_not_batched_; }

  struct Step;

 private:
  TorchGraph();
  Graph g_;
  std::map<std::string, torch::Tensor> weights_;
  std::vector<std::string> decayed_, other_;
  std::map<std::string, int> slot_;  // tensor name -> value slot
  std::vector<std::unique_ptr<Step>> steps_;
  std::unique_ptr<BatchedBranches> batched_;
  std::string why_not_batched_;
  bool training_ = false;
};

// Tensor <-> torch (copies).
torch::Tensor ToTorch(const Tensor& t);
Tensor FromTorch(const torch::Tensor& t);

}  // namespace shoal

#endif  // SHOAL_TRAIN_TORCH_GRAPH_H_
