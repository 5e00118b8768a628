// `shoal plan MODEL --devices N | --cluster FILE --strategy S`: makes a Plan,
// prints the choice and its prediction (every task and reason with
// --verbose), writes it as JSON (-o) and Graphviz (--dot).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/calibration_flags.h"
#include "cli/commands.h"
#include "cli/plan_common.h"
#include "cli/prediction_source.h"
#include "cluster/slow_link.h"
#include "lcp/find_classifier.h"
#include "lcp/split_branches.h"
#include "models/zoo.h"
#include "onnx/onnx_export.h"
#include "partition/strategy.h"
#include "plan/broadcast.h"
#include "plan/plan_cost.h"
#include "plan/plan_json.h"
#include "plan/plan_print.h"
#include "plan/plan_svg.h"
#include "plan/plan_verify.h"
#include "planner/cluster_split.h"
#include "planner/predict.h"
#include "sim/latency_model.h"
#include "sim/profile.h"

namespace shoal {
namespace {

struct PlanArgs {
  std::string model, strategy = "auto", out, dot, svg, input_shape;
  std::string objective = "latency", profile;
  uint64_t weights_seed = 0, random_seed = 1;
  int64_t branches = 0;
  double fatten = 0, lcp_target_ms = 0;
  int hub = 0, concurrency = 0;
  bool json = false, verbose = false, image_input = false, float_input = false;
  double time_limit = 10;
  std::string spatial_fc = "auto";
  std::string broadcast = "auto";
  std::string wire_dtype = "f32", wire_compression = "auto";
  double read_factor = PlanOptions().max_read_factor;
  double input_read_factor = -1;
  double fuse_blocks = 0;
  double overlap_recompute = PlanOptions().max_overlap_recompute;
  std::string halo_overlap = "on";
  std::string tiles = "strips";
  std::string reduce = "peers";
  std::string reduce_overlap = "off";
  std::string fuse_objective = "link";
  DeviceFlags devices;
  DtypeFlags dtype;
};

// The flags as PlanOptions, the model reference included.
StatusOr<PlanOptions> PlanOptionsFromFlags(const PlanArgs& a,
                                           const Cluster& cluster) {
  PlanOptions po;
  po.strategy = a.strategy;
  po.devices = cluster.PlanDevices();
  ASSIGN_OR_RETURN(po.objective, ParseObjective(a.objective));
  if (a.concurrency < 0) return InvalidArgument("--concurrency must be >= 0");
  if (a.concurrency > 0 && po.objective != PlanObjective::kThroughput) {
    return InvalidArgument("--concurrency goes with --objective throughput");
  }
  po.concurrency = a.concurrency;
  po.random_seed = a.random_seed;
  if (!a.profile.empty()) {
    ASSIGN_OR_RETURN(Profile prof, LoadProfile(a.profile));
    ASSIGN_OR_RETURN(LatencyModel lm,
                     LatencyModel::FromProfile(cluster, prof, a.model));
    po.latency = std::make_shared<LatencyModel>(std::move(lm));
  } else {
    po.latency =
        std::make_shared<LatencyModel>(LatencyModel::FromCluster(cluster));
  }
  po.hub = a.hub;
  po.ilp_time_limit_s = a.time_limit;
  // auto: --strategy auto chooses per candidate; other strategies scatter.
  po.broadcast_auto = a.broadcast == "auto";
  ASSIGN_OR_RETURN(
      const BroadcastSettings bs,
      NamedBroadcast(a.broadcast == "auto" ? "scatter" : a.broadcast));
  po.broadcast_fanout = bs.fanout;
  po.broadcast_scatter = bs.scatter;
  ASSIGN_OR_RETURN(po.wire.dtype, ParseWireDtype(a.wire_dtype));
  po.wire.lz4 = a.wire_compression == "lz4" ||
                (a.wire_compression == "auto" && HasSlowLink(cluster));
  if (a.spatial_fc == "whole") po.spatial_fc = SpatialFc::kWhole;
  if (a.spatial_fc == "lop") po.spatial_fc = SpatialFc::kLop;
  if (a.spatial_fc == "lip") po.spatial_fc = SpatialFc::kLip;
  if (a.spatial_fc == "lip-last-whole")
    po.spatial_fc = SpatialFc::kLipLastWhole;
  if (!(a.read_factor >= 1.0)) {
    return InvalidArgument(
        "--halo-read-factor must be at least 1 (strips read at least "
        "every input row once)");
  }
  po.max_read_factor = a.read_factor;
  if (a.input_read_factor >= 0 && !(a.input_read_factor >= 1.0)) {
    return InvalidArgument(
        "--halo-input-read-factor must be at least 1 (strips read at least "
        "every input row once)");
  }
  po.input_read_factor = a.input_read_factor;
  if (a.fuse_blocks != 0 && !(a.fuse_blocks >= 1.0)) {
    return InvalidArgument(
        "--fuse-blocks must be at least 1 (a segment's strips do at least "
        "its work), or 0 for chains that exchange halos at every block");
  }
  // auto makes its own segments-F candidates; a factor given to it would
  // turn every one of its strips into segments.
  if (a.fuse_blocks != 0 && a.strategy != "spatial") {
    return InvalidArgument(
        "--fuse-blocks goes with --strategy spatial (auto tries fused "
        "segments of its own)");
  }
  po.segment_work_factor = a.fuse_blocks;
  if (!(a.overlap_recompute >= 1.0)) {
    return InvalidArgument(
        "--halo-overlap-recompute must be at least 1 (a strip cut for "
        "overlap does at least its own work)");
  }
  po.max_overlap_recompute = a.overlap_recompute;
  po.overlap_halos = a.halo_overlap == "on";
  ASSIGN_OR_RETURN(po.tiles, ParseTileShape(a.tiles));
  po.reduce_on_peers = a.reduce == "peers";
  po.overlap_reductions = a.reduce_overlap == "on";
  po.fuse_objective = a.fuse_objective == "bytes" ? FuseObjective::kBytes
                                                  : FuseObjective::kLinkTime;
  po.link_rates = cluster.UplinkRates();
  po.link_latency_s = cluster.MaxLinkLatency();
  po.model.spec = a.model;
  po.model.weights_seed = a.weights_seed;
  if (a.branches < 0 || a.fatten < 0) {
    return InvalidArgument("--branches and --fatten must not be negative");
  }
  if (a.fatten > 0 && a.branches == 0) {
    return InvalidArgument("--fatten goes with --branches K");
  }
  po.model.lcp_branches = a.branches;
  po.model.lcp_fatten_pct = a.fatten;
  ASSIGN_OR_RETURN(auto shape, ParseInputShapeFlag(a.input_shape));
  if (shape) po.model.input_shape = *shape;
  // A zoo model that takes images is planned for 8-bit pixels unless told
  // otherwise: a quarter of the input's bytes, still exact (a value that
  // is not a pixel travels as float32), so no speedup hangs on a flag.
  if (a.image_input && a.float_input)
    return InvalidArgument("give one of --image-input and --float-input");
  po.input_pixels =
      a.image_input ||
      (!a.float_input && ZooModelTakesImages(a.model, shape.value_or(Shape{})));
  return po;
}

// --out, --dot and --svg.
Status WritePlanFiles(const PlanArgs& a, const Plan& p) {
  if (!a.out.empty()) RETURN_IF_ERROR(SavePlan(p, a.out));
  if (!a.dot.empty()) {
    std::ofstream f(a.dot);
    if (!f) return InvalidArgument("cannot write " + a.dot);
    WritePlanDot(p, f);
  }
  if (!a.svg.empty()) {
    RETURN_IF_ERROR(WritePlanSvg(p, a.svg, "shoal plan " + a.model));
  }
  return Status::Ok();
}

// A plan made by one strategy carries no prediction; the same latency
// model auto would have used predicts it, so that every plan prints one.
std::optional<PlanPrediction> PredictOne(const Plan& p, const PlanOptions& po) {
  if (p.prediction || !po.latency) return std::nullopt;
  auto pred = PredictPlan(p, *po.latency);
  if (!pred.ok()) return std::nullopt;
  PlanPrediction pp;
  pp.objective = "latency";
  pp.method = p.strategy;
  pp.latency_s = pred->latency_s;
  pp.throughput_rps = pred->throughput_rps;
  pp.devices = DeviceRows(p, *pred);
  return pp;
}

void PrintPlanText(const PlanArgs& a, const Plan& p, const PlanOptions& po,
                   const Cluster& cluster) {
  if (a.verbose) {
    PrintPlanTable(p, std::cout);
    std::cout << "\n";
  }
  PlanSummaryOptions so;
  const std::string n = std::to_string(p.devices.size());
  so.cluster =
      !a.devices.cluster.empty() ? a.devices.cluster + " (" + n + " devices)"
      : a.devices.shares.empty() ? n + " equal devices"
                                 : n + " devices of speeds " + a.devices.shares;
  so.prediction = PredictOne(p, po);
  PrintPlanSummary(p, so, std::cout);
  bool links_known = !a.profile.empty();
  for (const auto& d : cluster.devices) {
    links_known |= d.link.bandwidth_bps > 0 || d.link.latency_s > 0;
  }
  if (!links_known) {
    std::cout << "\nnote: the devices' links are unknown, so the prediction "
                 "prices moving data as\n  free; give each device a link in "
                 "a cluster file (docs/cluster-format.md)\n  or measure them "
                 "with shoal profile\n";
  }
  const bool predicted = p.prediction || so.prediction;
  if (predicted && a.profile.empty()) {
    std::cout << (links_known ? "\n" : "") << SpecNoteOf(SpecSourceOf(cluster));
  }
  if (!a.verbose) {
    std::cout << "\nevery task, each layer's reason"
              << (p.prediction ? " and every candidate" : "")
              << ": --verbose\n";
  }
  if (!a.out.empty()) std::cout << "\nwrote " << a.out << "\n";
  if (!a.dot.empty()) std::cout << "wrote " << a.dot << "\n";
  if (!a.svg.empty()) std::cout << "wrote " << a.svg << "\n";
}

// --dtype int8: the model quantized and written beside the plan
// (PLAN.int8.onnx), which the plan then names, so that every process that
// runs it loads the same int8 weights and scales.
StatusOr<std::string> WriteInt8Model(const PlanArgs& a, ModelRef* ref) {
  if (a.out.empty()) {
    return InvalidArgument(
        "--dtype int8 needs -o PLAN.json: the int8 model is written beside "
        "the plan, which names it");
  }
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(*ref, true));
  ASSIGN_OR_RETURN(QuantizedSummary q, QuantizeModel(a.dtype.calibration, &m));
  std::filesystem::path path(a.out);
  if (path.extension() == ".json") path.replace_extension();
  path += ".int8.onnx";
  path = std::filesystem::absolute(path);
  RETURN_IF_ERROR(ExportOnnx(m, path.string()));
  ModelRef r;
  r.spec = path.string();
  r.input_shape = ref->input_shape;
  *ref = r;
  return "wrote " + path.string() + ": " + q.Text();
}

Status RunPlan(const PlanArgs& a) {
  ASSIGN_OR_RETURN(Cluster cluster, a.devices.ResolveCluster());
  ASSIGN_OR_RETURN(PlanOptions po, PlanOptionsFromFlags(a, cluster));
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(po.model, false));
  // lcp of a model without branches and no --branches: the Splitter sizes
  // branches for the cluster's devices (as `shoal lcp split --cluster`).
  std::optional<LayerDecision> lcp_split;
  if (a.strategy == "lcp" && a.branches == 0 && !HasLcpBranches(m.graph) &&
      FindClassifier(m.graph).ok()) {
    ASSIGN_OR_RETURN(ClusterSplitResult r,
                     SplitForCluster(m.graph, cluster, a.lcp_target_ms));
    po.model.lcp_branches = r.split.summary.branches;
    po.model.lcp_shares = r.split.summary.shares;
    ASSIGN_OR_RETURN(m, LoadPlanModel(po.model, false));
    lcp_split = LayerDecision{"lcp split", "lcp", ClusterSplitReason(r)};
  }
  std::string int8_note;
  if (a.dtype.int8()) {
    ASSIGN_OR_RETURN(int8_note, WriteInt8Model(a, &po.model));
    ASSIGN_OR_RETURN(m, LoadPlanModel(po.model, false));
  }
  ASSIGN_OR_RETURN(Plan p, MakePlan(m.graph, po));
  if (lcp_split) p.decisions.insert(p.decisions.begin(), *lcp_split);
  RETURN_IF_ERROR(VerifyPlan(p));
  RETURN_IF_ERROR(CheckPlanMemory(p, m.graph));
  RETURN_IF_ERROR(WritePlanFiles(a, p));
  if (a.json) {
    std::cout << PlanToJson(p).dump(1) << "\n";
  } else {
    PrintPlanText(a, p, po, cluster);
    if (!int8_note.empty()) std::cout << int8_note << "\n";
  }
  return Status::Ok();
}

// Which strategy, and what auto and random plan for.
void AddStrategyFlags(CLI::App* cmd, PlanArgs* a) {
  // The registered strategies (partition/strategy.h), listed by CLI11.
  cmd->add_option("--strategy", a->strategy, "Planning strategy (default auto)")
      ->check(CLI::IsMember(StrategyNames()));
  cmd->add_option("--objective", a->objective,
                  "auto: minimise latency (default) or maximise throughput")
      ->check(CLI::IsMember({"latency", "throughput"}));
  cmd->add_option("--concurrency", a->concurrency,
                  "auto, throughput: requests in flight to simulate each "
                  "candidate at (default: one per device)");
  cmd->add_option("--assignment-seed", a->random_seed,
                  "random: which random assignment (default 1)");
  cmd->add_option("--profile", a->profile,
                  "auto: measured latencies (shoal profile) instead of the "
                  "cluster file's device specs");
}

// Where the Plan goes besides the table.
void AddOutputFlags(CLI::App* cmd, PlanArgs* a) {
  cmd->add_option("-o,--output", a->out, "Write the Plan as JSON");
  cmd->add_option("--dot", a->dot, "Write the Plan as Graphviz");
  cmd->add_option("--svg", a->svg,
                  "Write the Plan as a picture: devices by steps, transfers "
                  "with their bytes (SVG)");
  cmd->add_flag("--json", a->json, "Print the Plan as JSON instead of text");
  cmd->add_flag("--verbose", a->verbose,
                "Print every task, each device's bytes, each layer's reason "
                "and all of auto's candidates before the summary");
}

// How the model and its input are read, and LCP branching.
void AddModelFlags(CLI::App* cmd, PlanArgs* a) {
  cmd->add_flag("--image-input", a->image_input,
                "The input is an image: it travels as 8-bit pixels, a "
                "quarter of its float32 bytes, and is planned so (exact: a "
                "value that is not a pixel goes as float32). The default "
                "for zoo models that take images; give it for an .onnx "
                "file");
  cmd->add_flag("--float-input", a->float_input,
                "Plan the input as float32 even for a zoo model that takes "
                "images");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--branches", a->branches,
                  "Branch MODEL into K LCP branches first (as `shoal lcp "
                  "split`); the Plan records it, so `run` rebuilds it");
  cmd->add_option("--fatten", a->fatten,
                  "With --branches: widen every in-branch layer by PCT");
  cmd->add_option("--lcp-target-ms", a->lcp_target_ms,
                  "lcp without --branches: the fewest branches whose slowest "
                  "is predicted within MS (default: the most that fit, one "
                  "per device)");
  cmd->add_option("--weights-seed", a->weights_seed,
                  "Seed of zoo models' random weights (recorded in the Plan)");
  AddDtypeFlags(cmd, &a->dtype);
  cmd->add_option(
      "--input-device", a->hub,
      "Device that holds the input and receives the output (default 0)");
}

// How the strategies split layers and move data.
void AddSchemeFlags(CLI::App* cmd, PlanArgs* a) {
  cmd->add_option("--spatial-fc", a->spatial_fc,
                  "spatial: where fc layers run: whole on the input device, "
                  "lop (split by outputs over every device), lip (split by "
                  "inputs: each device gathers its channels of the strips "
                  "and the partial sums are reduced on the devices), "
                  "lip-last-whole (lip but the last fc layer, whole on the "
                  "input device, where the sums before it are added), or "
                  "auto (whole unless the input device cannot hold the "
                  "weights; the default)")
      ->check(CLI::IsMember({"auto", "whole", "lop", "lip", "lip-last-whole"}));
  cmd->add_option("--halo-read-factor", a->read_factor,
                  "spatial: fuse conv and pooling layers into one strip "
                  "chain while the strips together read at most this many "
                  "times the chain input's rows (1: exchange halos after "
                  "every window layer; default 1.5)");
  cmd->add_option("--halo-input-read-factor", a->input_read_factor,
                  "spatial: the same for the chain that reads the model "
                  "input, which reaches the strips over one uplink "
                  "(default: --halo-read-factor)");
  cmd->add_option("--fuse-blocks", a->fuse_blocks,
                  "spatial: fuse whole residual blocks (shortcuts and sums "
                  "included) into segments that exchange nothing inside, "
                  "each as deep as keeps its strips' work within this many "
                  "times the segment's (at least one block; "
                  "--halo-input-read-factor bounds the first); 0, the "
                  "default: chains stop at every sum");
  cmd->add_option("--halo-overlap-recompute", a->overlap_recompute,
                  "spatial: a strip cut for halo overlap may do at most this "
                  "many times its uncut work (its edges recompute rows of "
                  "the chain's inner layers that its interior also "
                  "computes); past it the strip waits for its halo whole "
                  "(default 1.1)");
  cmd->add_option("--tiles", a->tiles,
                  "spatial (and auto's spatial layers): strips of rows (the "
                  "default) or 2d tiles (bands of rows, each cut into "
                  "columns; fewer bytes than thin strips, more messages)")
      ->check(CLI::IsMember({"strips", "2d"}));
  cmd->add_option("--halo-overlap", a->halo_overlap,
                  "spatial: on (the default) cuts each device's strip into "
                  "the rows it computes from its own input and the edge rows "
                  "that read a neighbour's, so the halo travels while the "
                  "interior computes; off: the strip waits for its halo")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--reduce", a->reduce,
                  "where partial sums (lip, filter, fuse2) are added up: "
                  "peers (the default) has each device that holds them sum "
                  "one slice of channels (reduce-scatter), so the next "
                  "input split reads its slice where it is; hub sends them "
                  "all to the input device, as the papers' formulas count")
      ->check(CLI::IsMember({"peers", "hub"}));
  cmd->add_option("--reduce-overlap", a->reduce_overlap,
                  "heads: on computes each layer split by inputs in chunks "
                  "of tokens, those whose sums other devices reduce first, "
                  "so each chunk's partial sums travel while the next "
                  "computes; off (the default) sends them after the whole "
                  "layer (auto tries both)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--fuse-objective", a->fuse_objective,
                  "fuse-ilp (and auto's fuse-ilp candidate): link (the "
                  "default) minimises the time of the busiest device uplink "
                  "as shoal's plans move data; bytes minimises the total "
                  "communication C, the fully-distributed paper's objective")
      ->check(CLI::IsMember({"link", "bytes"}));
  cmd->add_option("--broadcast", a->broadcast,
                  "How a tensor that several devices read travels: scatter "
                  "(the source sends each 8 KiB chunk to one receiver in "
                  "turn, which passes it to all the others: the source's "
                  "uplink carries the tensor once), tree (binary trees of "
                  "receivers that forward each 32 KiB chunk as it "
                  "arrives), chain (each receiver forwards to the next), "
                  "direct (the source sends it to each device), or auto "
                  "(the default: --strategy auto predicts each candidate "
                  "all four ways and keeps the fastest; other strategies "
                  "scatter)")
      ->check(CLI::IsMember({"auto", "tree", "chain", "scatter", "direct"}));
  cmd->add_option("--wire-dtype", a->wire_dtype,
                  "How activations travel: f32 (exact; the default), or "
                  "f16 / bf16 (half the bytes, each value rounded; run "
                  "--check then accepts 1e-2 / 5e-2 relative)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  cmd->add_option("--wire-compression", a->wire_compression,
                  "lz4: messages whose values are at least 10% zeros (ReLU "
                  "outputs) are compressed, losslessly; none; or auto (lz4 "
                  "when a device's link is below 1 Gbit/s; the default)")
      ->check(CLI::IsMember({"auto", "lz4", "none"}));
  cmd->add_option("--time-limit", a->time_limit,
                  "ILP/MILP time limit in seconds (auto falls back to "
                  "Procedure 1 when it runs out)");
}

}  // namespace

void AddPlanCommand(CLI::App* app) {
  auto a = std::make_shared<PlanArgs>();
  CLI::App* cmd = app->add_subcommand(
      "plan",
      "Split a model over devices by one strategy; print and save the Plan");
  cmd->add_option("model", a->model, "Zoo name or .onnx file")->required();
  a->devices.Add(cmd);
  AddStrategyFlags(cmd, a.get());
  AddOutputFlags(cmd, a.get());
  AddModelFlags(cmd, a.get());
  AddSchemeFlags(cmd, a.get());
  cmd->callback([a] { throw CommandExit(ReportStatus(RunPlan(*a))); });
}

}  // namespace shoal
