// Training a shoal graph with libtorch on an image dataset (the LCP paper's
// recipe), and running a graph's forward pass in libtorch. This header keeps
// libtorch out of the code that includes it.
#ifndef SHOAL_TRAIN_TRAINER_H_
#define SHOAL_TRAIN_TRAINER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"
#include "train/fashion_mnist.h"
#include "util/status.h"

namespace shoal {

struct TrainProgress {
  int epoch = 0, epochs = 0;  // epoch counts from 1
  int64_t batch = 0, batches = 0;
  double loss = 0;      // running mean of this epoch's batch losses
  double accuracy = 0;  // running training accuracy this epoch, 0..1
  double lr = 0;
  bool epoch_done = false;
  double test_accuracy = -1;  // set once the epoch is done
  double seconds = 0;         // this epoch so far
};

struct TrainOptions {
  int epochs = 10;
  int64_t batch_size = 128;
  int64_t limit = 0;  // train on the first N training images (0: all)
  // The LCP paper's recipe: Adam (0.9, 0.99), lr 1e-2 decayed by 0.94 per
  // epoch, L2 5e-4 on conv/fc weights, zero biases. Weights: N(0, init_std)
  // as the paper when init_std > 0; 0 (the default) draws them N(0,
  // sqrt(2 / fan-in)) (He), because the paper's fixed 0.04 shrinks the
  // signal of a narrow layer (fan-in 25: gain 0.2) and LeNet-5-split8's
  // branches then barely learn (docs/lcp.md).
  double lr = 1e-2;
  double lr_decay = 0.94;
  double beta1 = 0.9, beta2 = 0.99;
  double weight_decay = 5e-4;
  double init_std = 0;
  // Start from these weights (fine-tuning a pruned model), not from
  // InitialWeights; they must hold every weight of the graph.
  const WeightStore* initial = nullptr;
  uint64_t seed = 1;
  int threads = 0;  // libtorch intra-op threads; 0: all cores
  // Run an LCP model's branches as one wider computation (see
  // train/torch_branches.h); the same numbers, several times faster.
  bool batch_branches = true;
  std::function<void(const TrainProgress&)> on_progress;
};

struct TrainResult {
  WeightStore weights;                // trained, every weight of the graph
  std::vector<TrainProgress> epochs;  // the last report of each epoch
  double test_accuracy = 0;
  // The trained model's class scores on every test image (test.count x
  // classes), in the graph output's own terms (after a final Softmax).
  std::vector<float> test_scores;
  int64_t classes = 0;
  double train_seconds = 0;  // the epochs, per-epoch test passes included
  bool branches_batched = false;
  std::string why_not_batched;  // empty when batched or without branches
};

// Initial weights: conv/fc/matmul weights N(0, std) (the paper's, std > 0)
// or N(0, sqrt(2 / fan-in)) (He, std <= 0), biases 0,
// BatchNormalization scale 1, shift 0, mean 0, variance 1; any other weight
// from shoal's seeded generator.
WeightStore InitialWeights(const Graph& g, double std, uint64_t seed);

// Trains `g` (one input [1, C, H, W] matching the images, one output [1, K]
// with K the dataset's classes) from InitialWeights with softmax
// cross-entropy (on the logits feeding a final Softmax, if there is one).
// Pixels are scaled to [0, 1].
StatusOr<TrainResult> TrainGraph(const Graph& g, const ImageDataset& data,
                                 const TrainOptions& o);

// The graph's outputs for `inputs` (batch on axis 0) run through the
// libtorch interpreter in inference mode; `*batched` (if given) tells
// whether the branches ran batched.
StatusOr<std::vector<Tensor>> TorchForward(const Graph& g,
                                           const WeightStore& weights,
                                           const std::vector<Tensor>& inputs,
                                           bool batch_branches = true,
                                           bool* batched = nullptr);

}  // namespace shoal

#endif  // SHOAL_TRAIN_TRAINER_H_
