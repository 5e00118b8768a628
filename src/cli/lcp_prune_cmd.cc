// `shoal lcp prune MODEL --ratio R --dataset DIR -o OUT.onnx`: structured
// pruning of a trained model (each LCP branch on its own), then a short
// fine-tuning from the pruned weights; prints what it cost in accuracy and
// what it saved in parameters, MACs and time on this host.
#include "cli/lcp_prune_cmd.h"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/lcp_training.h"
#include "engine/executor.h"
#include "graph/random_input.h"
#include "lcp/prune_channels.h"
#include "models/load_model.h"
#include "onnx/onnx_metadata.h"
#include "util/stats.h"
#include "util/units.h"

namespace shoal {
namespace {

struct LcpPruneArgs {
  std::string model, dataset, out;
  double ratio = 0.5;
  int epochs = 1;
  int64_t limit = 0;
  int64_t batch_size = 128;
  double lr = 1e-3;
  uint64_t seed = 1;
  int threads = 0;
  bool json = false;
};

// Median latency of one image through the engine on this host, one
// kernel thread (a Pi-class core's view: relative, not a Pi's time).
StatusOr<double> MedianLatencyMs(const Model& m, int runs) {
  ExecutorOptions eo;
  eo.threads = 1;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(m.graph, m.weights, eo));
  const Shape in = m.graph.FindTensor(m.graph.inputs[0])->shape;
  const std::vector<Tensor> inputs = {RandomInput(in, 1)};
  std::vector<Tensor> outs;
  RETURN_IF_ERROR(ex->Run(inputs, &outs));  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(ex->Run(inputs, &outs));
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  return Quantile(ms, 0.5);
}

// One stage of the report: a model's size, accuracy and latency.
struct Stage {
  GraphCost cost;
  double accuracy = 0;
  double latency_ms = 0;
};

StatusOr<Stage> Measure(const Model& m, const ImageDataset& data) {
  Stage s;
  ASSIGN_OR_RETURN(s.cost, ComputeGraphCost(m.graph));
  ASSIGN_OR_RETURN(EngineEval e, EvaluateWithEngine(m, data.test));
  s.accuracy = e.accuracy;
  ASSIGN_OR_RETURN(s.latency_ms, MedianLatencyMs(m, 50));
  return s;
}

nlohmann::json StageJson(const Stage& s) {
  return {{"params", s.cost.params},
          {"macs", s.cost.macs},
          {"weight_bytes", s.cost.weight_bytes()},
          {"test_accuracy", s.accuracy},
          {"latency_ms", s.latency_ms}};
}

void PrintText(const LcpPruneArgs& a, const Graph& g,
               const std::vector<PrunedLayer>& layers, const Stage& before,
               const Stage& pruned, const Stage& tuned) {
  auto line = [](const std::string& what, const Stage& s) {
    std::cout << "  " << std::left << std::setw(30) << what << std::right
              << std::setw(9) << HumanCount(s.cost.params) << std::setw(10)
              << HumanCount(s.cost.macs) << std::setw(12)
              << HumanBytes(s.cost.weight_bytes()) << std::setw(9)
              << Pct(s.accuracy) << std::setw(11) << HumanMs(s.latency_ms)
              << "\n";
  };
  std::cout << g.name << ": pruned " << Percent(a.ratio)
            << " of the output channels of " << Plural(layers.size(), "layer")
            << " by the L1 norm of their weights, then fine-tuned for "
            << Plural(a.epochs, "epoch") << "\n";
  std::cout << "  " << std::left << std::setw(30) << "" << std::right
            << std::setw(9) << "params" << std::setw(10) << "MACs"
            << std::setw(12) << "weights" << std::setw(9) << "test"
            << std::setw(11) << "latency"
            << "\n";
  line("original", before);
  line("pruned", pruned);
  line("pruned and fine-tuned", tuned);
  const double drop = 100 * (before.accuracy - tuned.accuracy);
  std::cout << std::fixed << std::setprecision(2)
            << "fine-tuned: " << std::fabs(drop)
            << (drop >= 0 ? " points below" : " points above")
            << " the original, " << std::setprecision(2)
            << static_cast<double>(before.cost.params) / tuned.cost.params
            << "x fewer params, "
            << static_cast<double>(before.cost.macs) / tuned.cost.macs
            << "x fewer MACs; latency: median of 50 images through the "
               "engine on this host, one thread\n";
  for (const auto& l : layers) {
    std::cout << "  " << l.node << ": " << l.before << " -> " << l.after
              << " (and the inputs of " << l.consumer << ")\n";
  }
  std::cout << "wrote " << a.out << "\n";
}

Status RunLcpPrune(const LcpPruneArgs& a) {
  if (a.out.empty()) return InvalidArgument("give -o PRUNED.onnx");
  if (a.epochs < 0) return InvalidArgument("--epochs must not be negative");
  LoadOptions lo;
  lo.with_weights = true;
  ModelMetadata metadata;  // the pruned file says what the original said
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo, &metadata));
  ASSIGN_OR_RETURN(ImageDataset data, LoadFashionMnist(a.dataset));
  ASSIGN_OR_RETURN(PrunedModel p, PruneChannels(m, {a.ratio}));
  if (p.layers.empty()) {
    return FailedPrecondition(
        "nothing in " + a.model + " can be pruned at " + Percent(a.ratio) +
        ": no layer's channels reach exactly one next Conv or Gemm through "
        "per-channel ops, or every such layer would keep them all");
  }
  std::cerr << "measuring the original and the pruned model on "
            << data.test.count << " test images\n";
  ASSIGN_OR_RETURN(Stage before, Measure(m, data));
  ASSIGN_OR_RETURN(Stage pruned, Measure(p.model, data));
  // Fine-tuning: the trainer from the pruned weights, at a smaller rate
  // than training from scratch. No epochs: the pruned weights as they are.
  int64_t used = 0;
  if (a.epochs == 0) {
    RETURN_IF_ERROR(ExportOnnxWithMetadata(p.model, metadata, a.out));
  } else {
    TrainOptions o;
    o.epochs = a.epochs;
    o.limit = a.limit;
    o.batch_size = a.batch_size;
    o.lr = a.lr;
    o.seed = a.seed;
    o.threads = a.threads;
    o.initial = &p.model.weights;
    const bool tty = isatty(2);
    o.on_progress = [tty](const TrainProgress& t) {
      ShowTrainProgress(t, tty);
    };
    ASSIGN_OR_RETURN(TrainedModel t,
                     TrainAndCheck(p.model.graph, data, o, a.out, metadata));
    used = t.used;
  }
  LoadOptions reload;
  reload.with_weights = true;
  ASSIGN_OR_RETURN(Model written, LoadModel(a.out, reload));
  ASSIGN_OR_RETURN(Stage tuned, Measure(written, data));
  if (a.json) {
    nlohmann::json j;
    j["model"] = m.graph.name;
    j["ratio"] = a.ratio;
    j["epochs"] = a.epochs;
    j["train_images"] = used;
    j["test_images"] = data.test.count;
    j["original"] = StageJson(before);
    j["pruned"] = StageJson(pruned);
    j["fine_tuned"] = StageJson(tuned);
    j["layers"] = nlohmann::json::array();
    for (const auto& l : p.layers) {
      j["layers"].push_back({{"node", l.node},
                             {"consumer", l.consumer},
                             {"before", l.before},
                             {"after", l.after}});
    }
    j["output"] = a.out;
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  PrintText(a, m.graph, p.layers, before, pruned, tuned);
  return Status::Ok();
}

}  // namespace

void AddLcpPruneCommand(CLI::App* lcp) {
  auto a = std::make_shared<LcpPruneArgs>();
  auto* cmd = lcp->add_subcommand(
      "prune",
      "Structured pruning of a trained model (each LCP branch alone): the "
      "output channels of least L1 weight norm go, with what reads them; "
      "then fine-tuning from the pruned weights on Fashion-MNIST");
  cmd->add_option("model", a->model,
                  "A trained .onnx file (shoal lcp train -o), or a zoo name")
      ->required();
  cmd->add_option("--ratio", a->ratio,
                  "Fraction of each prunable layer's output channels removed, "
                  "0 <= R < 1 (default 0.5)");
  cmd->add_option("--dataset", a->dataset,
                  "'fashion-mnist' (" + std::string(kDebianFashionMnistDir) +
                      ") or a directory with the four *-idx?-ubyte.gz files")
      ->required();
  cmd->add_option("--epochs", a->epochs,
                  "Fine-tuning epochs (default 1; 0: none, the pruned weights "
                  "as they are)");
  cmd->add_option("--limit", a->limit,
                  "Fine-tune on the first N training images (default all)");
  cmd->add_option("--batch-size", a->batch_size, "Batch size (default 128)");
  cmd->add_option("--lr", a->lr,
                  "Fine-tuning learning rate (default 1e-3, a tenth of "
                  "training's)");
  cmd->add_option("--seed", a->seed, "Seed of the shuffling");
  cmd->add_option("--threads", a->threads,
                  "libtorch threads (default: all cores)");
  cmd->add_option("-o,--out", a->out, "The pruned model (.onnx)")->required();
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunLcpPrune(*a))); });
}

}  // namespace shoal
