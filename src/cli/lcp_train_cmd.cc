// `shoal lcp train MODEL [--branches K] [--fatten PCT] --dataset DIR
// [--epochs N] [--limit N] [--seed S] [--target-accuracy-drop P] -o
// WEIGHTS.onnx [--json]`: trains the (branched) model with libtorch, writes
// it as ONNX, and checks that shoal's engine scores the test set exactly as
// the trainer did; with a target drop, fattens the split until it is
// within P points of the original (the paper's Fig. 7).
#include "cli/lcp_train_cmd.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/lcp_training.h"
#include "graph/cost.h"
#include "lcp/split_branches.h"
#include "models/load_model.h"
#include "onnx/onnx_export.h"
#include "train/engine_eval.h"
#include "train/fashion_mnist.h"
#include "train/trainer.h"
#include "util/units.h"

namespace shoal {
namespace {

struct LcpTrainArgs {
  std::string model;
  std::string input_shape;
  int64_t branches = 1;
  double fatten = 0;
  std::string dataset;
  int epochs = 10;
  int64_t limit = 0;
  int64_t batch_size = 128;
  double lr = 1e-2;
  double lr_decay = 0.94;
  double weight_decay = 5e-4;
  double init_std = 0;
  uint64_t seed = 1;
  int threads = 0;
  std::string out;
  bool json = false;
  // The Fig. 7 loop: < 0 off; else the accuracy drop, in points, to reach.
  double target_drop = -1;
  double fatten_step = 10, max_fatten = 200;
};

// 10 -> "10", 12.5 -> "12.5", whatever the stream's flags.
std::string Num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// The paper's Fig. 7 loop: train the original, then the split fattened
// by 0, 10, 20 % ... until its accuracy is within `drop` points of the
// original's. Each step is trained from scratch with the same options;
// the chosen one is written to a.out.
Status RunFattenLoop(const LcpTrainArgs& a, const Graph& original,
                     const ImageDataset& data, const TrainOptions& o) {
  const std::string scratch = a.out + ".step.onnx";
  std::cerr << "original model:\n";
  ASSIGN_OR_RETURN(
      TrainedModel base,
      TrainAndCheck(original, data, o, scratch, TrainedModelMetadata(data)));
  const double base_acc = base.e.accuracy;
  if (!a.json) {
    std::cout << "original " << original.name << ": "
              << HumanCount(base.cost.params) << " params, "
              << HumanCount(base.cost.macs) << " MACs, test " << Pct(base_acc)
              << "\n"
              << std::flush;
  }
  nlohmann::json steps = nlohmann::json::array();
  double best_acc = -1, best_fatten = 0, chosen = -1;
  for (double f = a.fatten; f <= a.max_fatten + 1e-9; f += a.fatten_step) {
    ASSIGN_OR_RETURN(Graph g, SplitIntoBranches(original, {a.branches, f}));
    std::cerr << "split " << a.branches << ", fattened " << f << "%:\n";
    ASSIGN_OR_RETURN(TrainedModel t, TrainAndCheck(g, data, o, scratch,
                                                   TrainedModelMetadata(data)));
    const double drop = 100 * (base_acc - t.e.accuracy);
    const bool ok = drop <= a.target_drop + 1e-9;
    std::cout << "fatten " << std::setw(4) << Num(f) << "%: " << g.name << ", "
              << HumanCount(t.cost.params) << " params, "
              << HumanCount(t.cost.macs) << " MACs, test " << Pct(t.e.accuracy)
              << ", " << std::fixed << std::setprecision(2) << std::fabs(drop)
              << (drop >= 0 ? " points below" : " points above")
              << " the original" << (ok ? " (within " : " (over ")
              << a.target_drop << ")\n"
              << std::flush;
    steps.push_back({{"fatten_pct", f},
                     {"model", g.name},
                     {"params", t.cost.params},
                     {"macs", t.cost.macs},
                     {"test_accuracy", t.e.accuracy},
                     {"drop_points", drop}});
    if (t.e.accuracy > best_acc) {
      best_acc = t.e.accuracy;
      best_fatten = f;
      std::filesystem::rename(scratch, a.out);
    }
    if (ok) {
      chosen = f;
      break;
    }
  }
  std::error_code ignored;
  std::filesystem::remove(scratch, ignored);
  if (a.json) {
    nlohmann::json j;
    j["model"] = original.name;
    j["branches"] = a.branches;
    j["original_test_accuracy"] = base_acc;
    j["target_drop_points"] = a.target_drop;
    j["steps"] = steps;
    j["chosen_fatten_pct"] = chosen >= 0 ? nlohmann::json(chosen) : nullptr;
    j["output"] = a.out;
    std::cout << j.dump(2) << "\n";
  }
  if (chosen < 0) {
    return FailedPrecondition(
        "no fattening up to " + Num(a.max_fatten) + "% brings " +
        std::to_string(a.branches) + " branches within " + Num(a.target_drop) +
        " points of the original's " + Pct(base_acc) + "; the best, fattened " +
        Num(best_fatten) + "% (" + Pct(best_acc) + "), is written to " + a.out +
        " (train longer: --epochs, --limit)");
  }
  if (!a.json) {
    std::cout << "chose fatten " << Num(chosen) << "%; wrote " << a.out << "\n";
  }
  return Status::Ok();
}

Status RunLcpTrain(const LcpTrainArgs& a) {
  if (a.out.empty()) return InvalidArgument("give -o WEIGHTS.onnx");
  if (a.branches < 1)
    return InvalidArgument("--branches must be at least 1, not " +
                           std::to_string(a.branches));
  if (a.fatten < 0) return InvalidArgument("--fatten must not be negative");
  const bool loop = a.target_drop >= 0;
  if (loop && a.branches < 2)
    return InvalidArgument(
        "--target-accuracy-drop goes with --branches K (K >= 2)");
  if (loop && !(a.fatten_step > 0 && a.max_fatten >= a.fatten))
    return InvalidArgument(
        "--fatten-step must be > 0 and --max-fatten at least --fatten");
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  Graph g = m.graph;
  if (!loop && (a.branches > 1 || a.fatten > 0)) {
    ASSIGN_OR_RETURN(g, SplitIntoBranches(m.graph, {a.branches, a.fatten}));
  }
  ASSIGN_OR_RETURN(ImageDataset data, LoadFashionMnist(a.dataset));

  TrainOptions o;
  o.epochs = a.epochs;
  o.limit = a.limit;
  o.batch_size = a.batch_size;
  o.lr = a.lr;
  o.lr_decay = a.lr_decay;
  o.weight_decay = a.weight_decay;
  o.init_std = a.init_std;
  o.seed = a.seed;
  o.threads = a.threads;
  const bool tty = isatty(2);
  o.on_progress = [tty](const TrainProgress& p) { ShowTrainProgress(p, tty); };
  if (loop) return RunFattenLoop(a, m.graph, data, o);
  ASSIGN_OR_RETURN(TrainedModel t, TrainAndCheck(g, data, o, a.out,
                                                 TrainedModelMetadata(data)));
  const GraphCost& cost = t.cost;
  const TrainResult& r = t.r;
  const EngineEval& e = t.e;
  const ScoreComparison& c = t.c;
  const int64_t used = t.used;
  const double engine_s = t.engine_s;

  if (a.json) {
    nlohmann::json j;
    j["model"] = m.graph.name;
    j["branches"] = a.branches;
    j["fatten_pct"] = a.fatten;
    j["epochs"] = a.epochs;
    j["train_images"] = used;
    j["test_images"] = data.test.count;
    j["test_accuracy"] = r.test_accuracy;
    j["engine_test_accuracy"] = e.accuracy;
    j["engine_disagreements"] = c.disagreements;
    j["engine_max_abs_score_diff"] = c.max_abs_diff;
    j["params"] = cost.params;
    j["macs"] = cost.macs;
    j["train_seconds"] = r.train_seconds;
    j["engine_seconds"] = engine_s;
    j["final_loss"] = r.epochs.back().loss;
    j["output"] = a.out;
    std::cout << j.dump(2) << "\n";
    return Status::Ok();
  }
  std::cout << g.name << ": " << HumanCount(cost.params) << " params, "
            << HumanCount(cost.macs) << " MACs, " << a.epochs << " epoch"
            << (a.epochs == 1 ? "" : "s") << " on " << used << " images in "
            << std::fixed << std::setprecision(1) << r.train_seconds << " s\n"
            << "  test accuracy (trainer, libtorch): " << Pct(r.test_accuracy)
            << " of " << data.test.count << " images\n"
            << "  test accuracy (engine, " << a.out << "): " << Pct(e.accuracy)
            << " (largest score difference " << std::scientific
            << std::setprecision(1) << c.max_abs_diff << std::fixed;
  if (c.disagreements > 0)
    std::cout << "; " << c.disagreements
              << " near-tie image(s) classified differently";
  std::cout << ")\nwrote " << a.out << "\n";
  return Status::Ok();
}

}  // namespace

void AddLcpTrainCommand(CLI::App* lcp) {
  auto a = std::make_shared<LcpTrainArgs>();
  auto* cmd = lcp->add_subcommand(
      "train",
      "Train a (branched) model on Fashion-MNIST with libtorch and write it "
      "as ONNX; the paper's recipe: Adam (0.9, 0.99), lr 1e-2 decayed 0.94 "
      "per epoch, L2 5e-4, batch 128; He initial weights (the paper's "
      "N(0, 0.04) starves narrow branches: --init-std 0.04 restores it)");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("--branches", a->branches,
                  "Number of branches K (default 1)");
  cmd->add_option("--fatten", a->fatten,
                  "Widen every in-branch layer by PCT percent");
  cmd->add_option("--dataset", a->dataset,
                  "'fashion-mnist' (" + std::string(kDebianFashionMnistDir) +
                      ") or a directory with the four *-idx?-ubyte.gz files")
      ->required();
  cmd->add_option("--epochs", a->epochs, "Training epochs (default 10)");
  cmd->add_option("--limit", a->limit,
                  "Train on the first N training images (default all)");
  cmd->add_option("--batch-size", a->batch_size, "Batch size (default 128)");
  cmd->add_option("--lr", a->lr,
                  "Initial learning rate (default 1e-2, the paper's)");
  cmd->add_option("--lr-decay", a->lr_decay,
                  "Learning-rate factor per epoch (default 0.94)");
  cmd->add_option("--weight-decay", a->weight_decay,
                  "L2 weight decay of conv/fc weights (default 5e-4)");
  cmd->add_option("--init-std", a->init_std,
                  "Std of the initial conv/fc weights (default 0: He, "
                  "sqrt(2 / fan-in); the paper's is 0.04)");
  cmd->add_option("--seed", a->seed, "Seed of the weights and the shuffling");
  cmd->add_option("--threads", a->threads,
                  "libtorch threads (default: all cores)");
  cmd->add_option("--input-shape", a->input_shape,
                  "Input shape, e.g. 1,1,28,28");
  cmd->add_option("-o,--output", a->out, "Write the trained model as ONNX")
      ->required();
  cmd->add_option("--target-accuracy-drop", a->target_drop,
                  "The paper's Fig. 7 loop: train the original, then the "
                  "split fattened by --fatten-step % more each time, until "
                  "its test accuracy is within P points of the original's; "
                  "writes that one");
  cmd->add_option("--fatten-step", a->fatten_step,
                  "With --target-accuracy-drop: fattening step (default 10)");
  cmd->add_option("--max-fatten", a->max_fatten,
                  "With --target-accuracy-drop: give up past this fattening "
                  "(default 200)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunLcpTrain(*a))); });
}

}  // namespace shoal
