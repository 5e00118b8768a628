// The libtorch side of TrainGraph and TorchForward (see torch_module.h).
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "train/torch_graph.h"
#include "train/torch_module.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Checks the graph against the images; returns the number of classes.
StatusOr<int64_t> CheckGraphFitsData(const Graph& g, const ImageDataset& d) {
  if (g.inputs.size() != 1 || g.outputs.size() != 1)
    return InvalidArgument("model '" + g.name + "' has " +
                           std::to_string(g.inputs.size()) + " inputs and " +
                           std::to_string(g.outputs.size()) +
                           " outputs; training needs one of each");
  const Shape in = g.FindTensor(g.inputs[0])->shape;
  const Shape want = {1, 1, d.train.rows, d.train.cols};
  if (in != want)
    return InvalidArgument(
        "model '" + g.name + "' takes input " + ShapeToString(in) +
        " but the dataset's images are " + ShapeToString(want) +
        " (try --input-shape " + std::to_string(want[0]) + "," +
        std::to_string(want[1]) + "," + std::to_string(want[2]) + "," +
        std::to_string(want[3]) + ")");
  if (d.test.rows != d.train.rows || d.test.cols != d.train.cols)
    return InvalidArgument(
        "the dataset's test images are " + std::to_string(d.test.rows) + "x" +
        std::to_string(d.test.cols) + ", its training images " +
        std::to_string(d.train.rows) + "x" + std::to_string(d.train.cols));
  const Shape out = g.FindTensor(g.outputs[0])->shape;
  if (out.size() != 2 || out[0] != 1 || out[1] != d.classes)
    return InvalidArgument("model '" + g.name + "' outputs " +
                           ShapeToString(out) + ", the dataset has " +
                           std::to_string(d.classes) + " classes (expected 1x" +
                           std::to_string(d.classes) + ")");
  return d.classes;
}

// The logits: the input of a final Softmax over the classes, else the
// output itself.
std::string LogitsTensor(const Graph& g) {
  const int p = g.ProducerIndex(g.outputs[0]);
  if (p >= 0 && g.nodes[p].op == "Softmax") {
    const int64_t axis = g.nodes[p].attrs.GetInt("axis", -1);
    if (axis == -1 || axis == 1) return g.nodes[p].inputs[0];
  }
  return g.outputs[0];
}

torch::Tensor Images(const ImageSet& s) {
  return torch::from_blob(const_cast<uint8_t*>(s.pixels.data()),
                          {s.count, 1, s.rows, s.cols}, torch::kUInt8);
}

torch::Tensor Labels(const ImageSet& s) {
  return torch::from_blob(const_cast<uint8_t*>(s.labels.data()), {s.count},
                          torch::kUInt8)
      .to(torch::kLong);
}

torch::Tensor ToInput(const torch::Tensor& u8) {
  return u8.to(torch::kFloat32).div_(255.0);
}

// Scores of the graph output on every test image, and the accuracy.
Status Evaluate(TorchGraph* tg, const ImageSet& test,
                std::vector<float>* scores, double* accuracy) {
  torch::NoGradGuard no_grad;
  tg->SetTraining(false);
  const torch::Tensor images = Images(test), labels = Labels(test);
  std::vector<torch::Tensor> parts;
  for (int64_t b = 0; b < test.count; b += 1000) {
    const int64_t e = std::min(test.count, b + 1000);
    ASSIGN_OR_RETURN(auto out, tg->Forward({ToInput(images.slice(0, b, e))}));
    parts.push_back(out[0]);
  }
  const torch::Tensor all = torch::cat(parts).contiguous();
  *accuracy = all.argmax(1).eq(labels).sum().item<double>() / test.count;
  scores->assign(all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
  return Status::Ok();
}

StatusOr<TrainResult> Train(const Graph& g, const ImageDataset& data,
                            const TrainOptions& o) {
  ASSIGN_OR_RETURN(const int64_t classes, CheckGraphFitsData(g, data));
  if (o.epochs < 1) return InvalidArgument("--epochs must be at least 1");
  if (o.batch_size < 1) return InvalidArgument("--batch-size must be >= 1");
  if (o.limit < 0) return InvalidArgument("--limit must not be negative");
  if (o.init_std < 0)
    return InvalidArgument("--init-std must not be negative (0: He)");
  const int64_t n =
      o.limit > 0 ? std::min(o.limit, data.train.count) : data.train.count;
  if (n == 0 || data.test.count == 0)
    return InvalidArgument("the dataset in '" + data.dir +
                           "' has no training or no test images");
  at::set_num_threads(o.threads > 0
                          ? o.threads
                          : std::max(1u, std::thread::hardware_concurrency()));
  torch::manual_seed(o.seed);
  if (o.initial != nullptr) RETURN_IF_ERROR(CheckWeights(g, *o.initial));
  ASSIGN_OR_RETURN(
      auto tg, TorchGraph::Create(g,
                                  o.initial != nullptr
                                      ? *o.initial
                                      : InitialWeights(g, o.init_std, o.seed),
                                  o.batch_branches));
  const std::string logits_name = LogitsTensor(g);
  const bool logits = logits_name != g.outputs[0] ||
                      g.ProducerIndex(g.outputs[0]) < 0 ||
                      g.nodes[g.ProducerIndex(g.outputs[0])].op != "Softmax";

  using torch::optim::AdamOptions;
  auto adam = [&](double wd) {
    return std::make_unique<AdamOptions>(
        AdamOptions(o.lr).betas({o.beta1, o.beta2}).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (!tg->DecayedParameters().empty())
    groups.emplace_back(tg->DecayedParameters(), adam(o.weight_decay));
  if (!tg->OtherParameters().empty())
    groups.emplace_back(tg->OtherParameters(), adam(0));
  if (groups.empty())
    return InvalidArgument("model '" + g.name + "' has no weights to train");
  torch::optim::Adam opt(groups, AdamOptions(o.lr));

  const torch::Tensor images = Images(data.train).slice(0, 0, n);
  const torch::Tensor labels = Labels(data.train).slice(0, 0, n);
  TrainResult r;
  r.classes = classes;
  r.branches_batched = tg->branches_batched();
  r.why_not_batched = tg->why_not_batched();
  const auto t_all = Clock::now();
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const auto t0 = Clock::now();
    TrainProgress p;
    p.epoch = epoch;
    p.epochs = o.epochs;
    p.batches = (n + o.batch_size - 1) / o.batch_size;
    p.lr = o.lr * std::pow(o.lr_decay, epoch - 1);
    for (auto& group : opt.param_groups())
      static_cast<AdamOptions&>(group.options()).lr(p.lr);
    tg->SetTraining(true);
    const torch::Tensor perm = torch::randperm(n, torch::kLong);
    double loss_sum = 0;
    int64_t correct = 0, seen = 0;
    for (int64_t b = 0; b < p.batches; ++b) {
      const torch::Tensor idx =
          perm.slice(0, b * o.batch_size, std::min(n, (b + 1) * o.batch_size));
      const torch::Tensor x = ToInput(images.index_select(0, idx));
      const torch::Tensor y = labels.index_select(0, idx);
      ASSIGN_OR_RETURN(auto out, tg->Forward({x}, {logits_name}));
      torch::Tensor loss;
      try {
        loss = logits ? torch::cross_entropy_loss(out[0], y)
                      : torch::nll_loss(torch::log(out[0] + 1e-12f), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
      } catch (const std::exception& e) {
        return Internal(std::string("libtorch failed in the backward pass: ") +
                        e.what());
      }
      const double l = loss.item<double>();
      if (!std::isfinite(l))
        return FailedPrecondition(
            "training diverged: the loss is " + std::to_string(l) +
            " at epoch " + std::to_string(epoch) + ", batch " +
            std::to_string(b + 1) + " (try a lower --lr)");
      loss_sum += l * idx.size(0);
      correct += out[0].argmax(1).eq(y).sum().item<int64_t>();
      seen += idx.size(0);
      p.batch = b + 1;
      p.loss = loss_sum / seen;
      p.accuracy = static_cast<double>(correct) / seen;
      p.seconds = Since(t0);
      if (o.on_progress) o.on_progress(p);
    }
    RETURN_IF_ERROR(
        Evaluate(tg.get(), data.test, &r.test_scores, &r.test_accuracy));
    p.epoch_done = true;
    p.test_accuracy = r.test_accuracy;
    p.seconds = Since(t0);
    r.epochs.push_back(p);
    if (o.on_progress) o.on_progress(p);
  }
  r.train_seconds = Since(t_all);
  r.weights = tg->ExportWeights();
  return r;
}

StatusOr<std::vector<Tensor>> Forward(const Graph& g,
                                      const WeightStore& weights,
                                      const std::vector<Tensor>& inputs,
                                      bool batch_branches, bool* batched) {
  ASSIGN_OR_RETURN(auto tg, TorchGraph::Create(g, weights, batch_branches));
  if (batched) *batched = tg->branches_batched();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> in;
  for (const auto& t : inputs) in.push_back(ToTorch(t));
  ASSIGN_OR_RETURN(auto out, tg->Forward(in));
  std::vector<Tensor> result;
  for (const auto& t : out) result.push_back(FromTorch(t));
  return result;
}

}  // namespace
}  // namespace shoal

extern "C" const shoal::TorchModuleApi* ShoalTorchModuleApi() {
  static const shoal::TorchModuleApi api = {shoal::kTorchModuleVersion,
                                            shoal::Train, shoal::Forward};
  return &api;
}
