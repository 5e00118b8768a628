// --strategy auto: Procedure 1, the joint MILP and every single strategy,
// each made into a Plan and predicted on the latency model; the best for
// the objective wins, and the Plan records why and what it beat.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include "graph/op_registry.h"
#include "partition/layer_split.h"
#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "partition/transformer_blocks.h"
#include "partition/window_grids.h"
#include "plan/broadcast.h"
#include "plan/int8_transfers.h"
#include "plan/plan_cost.h"
#include "plan/plan_verify.h"
#include "plan/task_weights.h"
#include "planner/assignment_plan.h"
#include "planner/joint_milp.h"
#include "planner/predict.h"
#include "planner/procedure1.h"
#include "planner/reorder_room.h"
#include "planner/strip_balance.h"
#include "sim/simulator.h"

namespace shoal {

namespace {

std::string Ms(double s) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f ms", s * 1e3);
  return buf;
}

std::string Value(double v, PlanObjective objective) {
  if (objective == PlanObjective::kThroughput) {
    char buf[48];
    snprintf(buf, sizeof(buf), "%.3g req/s", v > 0 ? 1 / v : 0.0);
    return buf;
  }
  return Ms(v);
}

struct Candidate {
  std::string name;
  Plan plan;
  Prediction pred;
  bool ok = false;
  std::string note;
  std::string memo;  // how it was made, when that needs saying
  // A single strategy's options (its strips can be balanced).
  std::optional<PlanOptions> made_with;
};

// Requests per second with k in flight once the pipeline is full, by the
// discrete-event simulator on the planner's latency model.
StatusOr<double> SimulatedThroughput(const Plan& p, const LatencyModel& m,
                                     int k) {
  SimOptions so;
  so.concurrency = k;
  so.requests = std::max(8 * k, 16);
  ASSIGN_OR_RETURN(SimResult r, Simulate(p, m, so));
  return SteadyThroughput(r, k);
}

}  // namespace

namespace {

// auto's spatial candidates: the chain reading the model input no deeper
// than this, and strips cut for halo overlap up to this much more work.
constexpr double kShallowInputReadFactor = 1.5;
constexpr double kDeepOverlapRecompute = 2.0;
// Fused segments as deep as keep their strips within these many times
// their work.
constexpr double kSegmentWorkFactors[] = {1.1, 1.25, 1.5, 2.0, 3.0};

// Throughput is judged by the simulator at K requests in flight, where
// plans stay small enough to simulate; every single strategy is compared
// only up to this many devices.
constexpr int kMaxCompareDevices = 64;

// Strips balanced on the best spatial candidates: how many, and how many
// plans each may predict on the way, fewer for plans of more tasks, whose
// predictions take longer (AlexNet on eight Pi 3B+, 64 tasks, gets 375 and
// settles sooner; ResNet-50 on four Pi 4B, 224 tasks, gets 107, about
// two seconds). Two, since the order before balancing is not the order
// after: on eight Pi 3B+ AlexNet's second best spatial candidate, 2-D
// tiles with one more exchange and less halo recomputed (125.1 ms
// predicted, against 124.2 for the best), balances to 113.2 ms where the
// best reaches 118.4; measured on emulated boards, 116 ms against 122.
constexpr size_t kBalancedCandidates = 2;
constexpr int kBalanceTaskEvaluations = 24000;
constexpr int kMaxBalanceEvaluations = 400;

// Spatial candidates made again on fewer devices (AddFewerDevices), and
// how far behind the best spatial candidate one may be and still be
// balanced.
constexpr size_t kFewerDevicesCandidates = 2;
constexpr double kFewerDevicesBalancedWithin = 1.15;

// Whether `v` is one of the predictions `taken`, to the last digit: the
// same plan under another name (an input factor above the chain's depth,
// say).
bool AlreadyTaken(const std::vector<double>& taken, double v) {
  return std::any_of(taken.begin(), taken.end(),
                     [&](double t) { return std::abs(t - v) <= 1e-12 * t; });
}

// How a spatial candidate's name says where its fc layers run.
const char* FcSuffix(SpatialFc fc) {
  switch (fc) {
    case SpatialFc::kLop:
      return "-lop";
    case SpatialFc::kLip:
      return "-lip";
    case SpatialFc::kLipLastWhole:
      return "-lip-lastwhole";
    default:
      return "";
  }
}

// One run of --strategy auto: the candidates it makes, predicts and
// compares, and the plan of the best with the reasons.
class AutoPlanner {
 public:
  AutoPlanner(const Graph& g, PlanOptions opts, std::vector<PlanUnit> units)
      : g_(g),
        opts_(std::move(opts)),
        model_(opts_.latency),
        units_(std::move(units)),
        pr_(g, units_, *model_, opts_.hub),
        n_(static_cast<int>(opts_.devices.size())),
        // With few requests in flight the latency objective's MILP and
        // Procedure 1 plans can serve more than plans built for a full
        // pipeline: under throughput they compete too.
        simulate_(opts_.objective == PlanObjective::kThroughput &&
                  n_ <= kMaxCompareDevices),
        k_(opts_.concurrency > 0 ? opts_.concurrency : n_) {
    pr_.SetWire(opts_.wire, opts_.input_pixels);
    pr_.SetTiles(opts_.tiles);
  }

  StatusOr<Plan> Run() {
    const PlanObjective objective = opts_.objective;
    // The joint MILP, then Procedure 1 (also the fallback).
    const Status milp = AddMilp("milp", objective);
    if (!milp.ok()) {
      solver_ =
          "MILP not used: " + milp.message() + "; fell back to Procedure 1";
    }
    AddProcedure1("procedure1", objective);
    AddFastestDevice();
    if (simulate_) {
      AddMilp("milp-latency", PlanObjective::kLatency);
      AddProcedure1("procedure1-latency", PlanObjective::kLatency);
    }
    AddStrategies();
    AddFewerDevices();
    AddBalancedStrips();
    if (simulate_) SimulateThroughputs();
    ASSIGN_OR_RETURN(const int best, Best());
    return Chosen(best);
  }

 private:
  // Verifies and predicts a candidate plan; a failure is kept as its note.
  void Consider(const std::string& name, StatusOr<Plan> p,
                const std::string& memo = "") {
    Candidate c;
    c.name = name;
    c.memo = memo;
    if (!p.ok()) {
      c.note = p.status().message();
      cands_.push_back(std::move(c));
      return;
    }
    c.plan = std::move(p).value();
    // A quantized model's candidates are priced with their activations as
    // int8 where they will travel so (MakePlan does the same to the one
    // that wins; the strategies' plans have it already).
    Status s = SendInt8(&c.plan).status();
    if (s.ok()) s = VerifyPlan(c.plan);
    if (s.ok()) s = CheckPlanMemory(c.plan, g_);
    if (s.ok()) {
      auto pred = PredictPlan(c.plan, *model_);
      if (pred.ok()) {
        c.pred = pred.value();
        c.ok = true;
        if (opts_.broadcast_auto) ChooseBroadcast(&c);
      } else {
        s = pred.status();
      }
    }
    if (!s.ok()) c.note = s.message();
    cands_.push_back(std::move(c));
  }

  // How the candidate's one-to-many transfers travel: the way predicted
  // fastest for this plan. Scattering spares the source's uplink but adds a
  // hop; a binary tree adds log2 of the receivers; direct sends cost one
  // hop but load the source with every copy. Which wins depends on the
  // tensors' sizes and how many devices read each (AlexNet's MILP plan on
  // eight Pi 3s: 219 ms direct, 251 scattered, 261 down trees).
  void ChooseBroadcast(Candidate* c) const {
    const BroadcastSettings own = c->plan.broadcast;
    const Prediction own_pred = c->pred;
    BroadcastSettings best = own;
    std::string tried;
    bool differ = false;
    for (const char* name : {"scatter", "tree", "chain", "direct"}) {
      c->plan.broadcast = NamedBroadcast(name).value();
      const bool same = c->plan.broadcast.fanout == own.fanout &&
                        c->plan.broadcast.scatter == own.scatter &&
                        c->plan.broadcast.chunk_bytes == own.chunk_bytes;
      // The way it was built with is predicted already.
      auto pred =
          same ? StatusOr<Prediction>(own_pred) : PredictPlan(c->plan, *model_);
      if (!pred.ok()) continue;
      const double v = ObjectiveValue(*pred, opts_.objective);
      const double now = ObjectiveValue(c->pred, opts_.objective);
      differ |= v != now;
      tried += std::string(tried.empty() ? "" : ", ") + name + " " +
               Value(v, opts_.objective);
      if (v < now) {
        best = c->plan.broadcast;
        c->pred = *pred;
      }
    }
    c->plan.broadcast = best;
    // No tensor that several devices read: every way is the same plan.
    if (!differ) return;
    const std::string note =
        "broadcasts " + BroadcastName(best) + " (" + tried + ")";
    c->memo = c->memo.empty() ? note : c->memo + "; " + note;
  }

  // The joint MILP's plan for `obj`; returns why the solver failed.
  Status AddMilp(const std::string& name, PlanObjective obj) {
    const auto start = std::chrono::steady_clock::now();
    Status solved = Status::Ok();
    std::string memo;
    auto plan = WithReorderRoom(
        pr_,
        [&](const UnitPricer& rp) -> StatusOr<Plan> {
          MilpOptions mo;
          mo.objective = obj;
          const double spent = std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
          mo.time_limit_s = std::max(opts_.ilp_time_limit_s - spent,
                                     opts_.ilp_time_limit_s / 4);
          auto milp = SolveJointMilp(rp, mo);
          if (!milp.ok()) {
            solved = milp.status();
            return milp.status();
          }
          if (solver_.empty()) solver_ = "MILP " + milp->status;
          return PlanAssignment(g_, opts_, units_, milp->assignment,
                                MilpReasons(rp, *milp, obj));
        },
        &memo);
    Consider(name, std::move(plan), memo);
    return solved;
  }

  // Per unit: what the MILP chose and what it predicted.
  std::vector<std::string> MilpReasons(const UnitPricer& rp,
                                       const MilpResult& milp,
                                       PlanObjective obj) const {
    std::vector<std::string> reasons;
    const auto& devs = opts_.devices;
    for (size_t u = 0; u < units_.size(); ++u) {
      const Placement& p = milp.assignment[u];
      const Load l = rp.Price(static_cast<int>(u), p);
      reasons.push_back(
          std::string("joint MILP (") + ObjectiveName(obj) + ", " +
          (milp.proven_optimal ? "optimal" : "time limit, best found") +
          "): " + FormName(p.form) + " on " + GroupName(devs, p.devices) +
          (p.form == Form::kReplicate ? ", requests dealt by speed"
           : p.devices.size() > 1     ? ", parts by speed"
                                      : "") +
          ", predicted " + Ms(l.seconds) + " compute");
    }
    return reasons;
  }

  // The whole model on the device that runs it soonest: on devices whose
  // links cost more than splitting saves, no plan beats it, and auto must
  // never choose one slower than a single device.
  void AddFastestDevice() {
    int fastest = -1;
    double least = 0;
    for (int d = 0; d < n_; ++d) {
      auto s = model_->GraphSeconds(d, g_);
      if (!s.ok()) return;
      if (fastest < 0 || *s < least) {
        fastest = d;
        least = *s;
      }
    }
    if (fastest < 0) return;
    const Assignment a(units_.size(), Placement{Form::kWhole, {fastest}});
    const std::string reason = "the whole model on the fastest device alone, " +
                               opts_.devices[fastest].name;
    Consider("one-device",
             PlanAssignment(g_, opts_, units_, a,
                            std::vector<std::string>(units_.size(), reason)));
  }

  void AddProcedure1(const std::string& name, PlanObjective obj) {
    std::string memo;
    auto plan = Procedure1Plan(g_, opts_, units_, pr_, obj, &memo);
    Consider(name, std::move(plan), memo);
  }

  // Every single strategy, where plans stay small enough to compare.
  void AddStrategies() {
    for (const auto& s : StrategyNames()) {
      if (s == "auto" || s == "random" || s == "procedure1") continue;
      // Only a transformer lists its scheme: a CNN's plan, alternatives
      // and all, stays what it was before transformers were split.
      if (s == "heads" && FindAttentionBlocks(g_).empty()) continue;
      if (s == "windows" && FindWindowGrids(g_).empty()) continue;
      Candidate skip;
      skip.name = s;
      if (s == "lcp") {
        skip.note = "not compared: it changes the model";
        cands_.push_back(skip);
        continue;
      }
      if (n_ > kMaxCompareDevices) {
        skip.note = "not compared: " + std::to_string(n_) +
                    " devices (more than " +
                    std::to_string(kMaxCompareDevices) +
                    ") would make plans of devices x layers tasks";
        cands_.push_back(skip);
        continue;
      }
      PlanOptions so = opts_;
      so.strategy = s;
      ConsiderStrategy(s, so);
      if (s == "spatial") AddSpatialDepths(so);
      if (s == "heads") {
        // Each reduction in chunks of tokens, sent while the next chunk
        // computes: more tasks, each paying a board's step.
        so.overlap_reductions = true;
        Consider("heads-overlap", MakePlan(g_, so));
      }
    }
  }

  // How deep strips fuse before they exchange halos: deeper saves
  // messages, shallower saves the halo's recomputed rows. The latency model
  // prices both; 1.0 is a halo exchange at every window layer but those
  // that need none. The chain that reads the model input may stay
  // shallower than the rest (its extra rows all leave the input device's
  // one uplink first), and strips may compute their interiors while their
  // halos travel even where that recomputes more of a deep chain: where a
  // message costs a link's latency, both pay (ResNet-18 on eight Pi 3B+
  // over Wi-Fi: 211 ms predicted without, 199 with). Where links are fast
  // and every task pays a board's per-layer step, strips that wait for
  // their halo whole run fewer tasks (ResNet-50 on four Pi 4B over Gigabit
  // Ethernet: 126 ms predicted with the interiors cut off, 114 without).
  void AddSpatialDepths(PlanOptions so) {
    // Without an fc layer to split, every fc placement is the same plan.
    int fc_layers = 0;
    for (const auto& n : g_.nodes) fc_layers += IsFcLayer(g_, n);
    const bool has_fc = fc_layers > 0;
    for (double f : {1.0, 1.2, 1.5, 2.0, 4.0, 6.0}) {
      for (SpatialFc fc : {SpatialFc::kWhole, SpatialFc::kLop, SpatialFc::kLip,
                           SpatialFc::kLipLastWhole}) {
        if (!has_fc && fc != SpatialFc::kWhole) continue;
        // With one fc layer, the last whole is lip's plan.
        if (fc == SpatialFc::kLipLastWhole && fc_layers < 2) continue;
        for (double in : {-1.0, kShallowInputReadFactor}) {
          if (in >= 0 && in >= f) continue;  // the same chains as -1
          // 0: strips wait for their halo whole (--halo-overlap off).
          for (double ov :
               {0.0, kDefaultOverlapRecompute, kDeepOverlapRecompute}) {
            if (ov > 0 && !opts_.overlap_halos) continue;
            if (f == opts_.max_read_factor && fc == SpatialFc::kWhole &&
                in < 0 && (ov > 0) == opts_.overlap_halos &&
                (ov == 0 || ov == opts_.max_overlap_recompute))
              continue;  // the plain spatial candidate
            so.max_read_factor = f;
            so.spatial_fc = fc;
            so.input_read_factor = in;
            so.overlap_halos = ov > 0;
            if (ov > 0) so.max_overlap_recompute = ov;
            char name[80];
            std::snprintf(name, sizeof(name), "spatial-%.1f%s%s%s", f,
                          in >= 0 ? "-input1.5" : "", FcSuffix(fc),
                          ov == 0                          ? "-wait"
                          : ov == kDefaultOverlapRecompute ? ""
                                                           : "-overlap2");
            ConsiderStrategy(name, so);
          }
        }
      }
    }
    AddFusedSegments(so, fc_layers);
    AddTiles(so, has_fc);
  }

  // And on 2-D tiles: fewer bytes than thin strips, more messages. A deep
  // chain of tiles reaches maps too small for a strip per device (AlexNet's
  // last pooling, 6 rows, on eight devices), and an fc layer split by its
  // inputs then multiplies each tile where it lies
  // (partition/plan_builder_boxes.cc), with no exchange between the
  // chain and the layer: on eight Pi 3B+ over Wi-Fi, 123.5 ms predicted
  // against 128.7 for the best strips.
  void AddTiles(PlanOptions so, bool has_fc) {
    if (opts_.tiles != TileShape::kStrips) return;
    so.max_read_factor = opts_.max_read_factor;
    so.spatial_fc = opts_.spatial_fc;
    so.input_read_factor = opts_.input_read_factor;
    so.max_overlap_recompute = opts_.max_overlap_recompute;
    so.overlap_halos = opts_.overlap_halos;
    so.tiles = TileShape::k2D;
    ConsiderStrategy("spatial-2d", so);
    std::vector<SpatialFc> fcs = {opts_.spatial_fc};
    if (has_fc) fcs = {SpatialFc::kLip, SpatialFc::kLipLastWhole};
    for (double f : {4.0, 6.0}) {
      for (SpatialFc fc : fcs) {
        for (double in : {-1.0, kShallowInputReadFactor}) {
          so.max_read_factor = f;
          so.spatial_fc = fc;
          so.input_read_factor = in;
          char name[80];
          std::snprintf(name, sizeof(name), "spatial-2d-%.1f%s%s", f,
                        in >= 0 ? "-input1.5" : "", FcSuffix(fc));
          ConsiderStrategy(name, so);
        }
      }
    }
  }

  // Strips fused over whole residual blocks (partition/fused_segments.h):
  // the deeper a segment, the fewer messages and the more rows its strips
  // recompute. Where a message costs a Wi-Fi link's 9 ms and strips are
  // thick enough, one exchange per two or three blocks beats one per block
  // (ResNet-18 on six Pi 3B+: 195.8 ms predicted, against 197.3 for the
  // best per-block strips, 195.5 once those are balanced, which segments
  // are not); on eight the strips of the 14- and 7-row maps
  // are too thin, and per-block strips with overlap stay best (199 ms,
  // segments 208). The first segment, which reads the model input over
  // one uplink, may stay shallower.
  void AddFusedSegments(PlanOptions so, int fc_layers) {
    if (opts_.tiles != TileShape::kStrips) return;
    so.max_read_factor = opts_.max_read_factor;
    so.max_overlap_recompute = opts_.max_overlap_recompute;
    so.overlap_halos = opts_.overlap_halos;
    for (double f : kSegmentWorkFactors) {
      for (double in : {-1.0, kShallowInputReadFactor}) {
        if (in >= f) continue;  // the same segments as -1
        for (SpatialFc fc :
             {SpatialFc::kWhole, SpatialFc::kLip, SpatialFc::kLipLastWhole}) {
          if (fc_layers == 0 && fc != SpatialFc::kWhole) continue;
          if (fc == SpatialFc::kLipLastWhole && fc_layers < 2) continue;
          so.segment_work_factor = f;
          so.input_read_factor = in;
          so.spatial_fc = fc;
          char name[80];
          std::snprintf(name, sizeof(name), "segments-%.2f%s%s", f,
                        in >= 0 ? "-input1.5" : "", FcSuffix(fc));
          ConsiderStrategy(name, so);
        }
      }
    }
  }

  void ConsiderStrategy(const std::string& name, const PlanOptions& so) {
    Consider(name, MakePlan(g_, so));
    cands_.back().made_with = so;
  }

  // The best spatial candidates again on fewer devices: the input device
  // and the fastest others, two of them, three, and so on. Where every
  // message costs a link's latency, a halo exchange among eight strips
  // costs what one between two does, and each strip's edges recompute as
  // much, while the arithmetic each strip saves shrinks: ResNet-18 on two
  // of eight Pi 3B+ over Wi-Fi predicts 186.0 ms, on all eight 198.5.
  void AddFewerDevices() {
    if (n_ <= 2 || n_ > kMaxCompareDevices) return;
    std::vector<int> spatial;
    for (size_t i = 0; i < cands_.size(); ++i) {
      const Candidate& c = cands_[i];
      if (c.ok && c.made_with && c.made_with->strategy == "spatial" &&
          c.made_with->segment_work_factor == 0 &&
          c.made_with->spatial_devices.empty())
        spatial.push_back(static_cast<int>(i));
    }
    std::stable_sort(spatial.begin(), spatial.end(), [&](int a, int b) {
      return cands_[a].pred.latency_s < cands_[b].pred.latency_s;
    });
    // The input device first, then the others fastest first.
    std::vector<int> order(n_);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if ((a == opts_.hub) != (b == opts_.hub)) return a == opts_.hub;
      return opts_.devices[a].share > opts_.devices[b].share;
    });
    std::vector<double> taken;
    std::vector<std::pair<std::string, PlanOptions>> bases;
    for (int i : spatial) {
      if (bases.size() >= kFewerDevicesCandidates) break;
      const Candidate& c = cands_[i];
      if (AlreadyTaken(taken, c.pred.latency_s)) continue;
      taken.push_back(c.pred.latency_s);
      bases.emplace_back(c.name, *c.made_with);
    }
    for (int k = 2; k < n_; ++k) {
      std::vector<int> group(order.begin(), order.begin() + k);
      std::sort(group.begin(), group.end());
      for (const auto& [name, base] : bases) {
        PlanOptions so = base;
        so.spatial_devices = group;
        ConsiderStrategy(name + "-on" + std::to_string(k), so);
      }
    }
  }

  // The best spatial candidates again, each strip's rows moved to where
  // the plan finishes soonest (planner/strip_balance.h): cut by the
  // devices' shares, a middle strip of a deep chain recomputes more halo
  // than an edge one, and the strips whose input leaves the input device
  // last start last.
  void AddBalancedStrips() {
    if (opts_.objective != PlanObjective::kLatency) return;
    std::vector<int> spatial;
    for (size_t i = 0; i < cands_.size(); ++i) {
      const Candidate& c = cands_[i];
      // Fused segments cut their rows for their own reasons: not balanced.
      if (c.ok && c.made_with && c.made_with->strategy == "spatial" &&
          c.made_with->segment_work_factor == 0)
        spatial.push_back(static_cast<int>(i));
    }
    std::stable_sort(spatial.begin(), spatial.end(), [&](int a, int b) {
      return cands_[a].pred.latency_s < cands_[b].pred.latency_s;
    });
    // The unbalanced predictions taken, by how many devices the strips
    // use (0: every device): the best kBalancedCandidates on every device,
    // the best one on each smaller count (AddFewerDevices).
    std::map<size_t, std::vector<double>> balanced;
    for (size_t k = 0; k < spatial.size(); ++k) {
      const int i = spatial[k];
      const Candidate c = cands_[i];
      const bool fewer = !c.made_with->spatial_devices.empty();
      std::vector<double>& taken =
          balanced[c.made_with->spatial_devices.size()];
      if (taken.size() >= (fewer ? 1 : kBalancedCandidates)) continue;
      // Balancing gains about a tenth at most (ResNet-18 on two of eight
      // Pi 3B+: 200.4 ms to 186.0; AlexNet's tiles on eight: 125.1 to
      // 113.2): fewer devices further behind than that stay as they are.
      if (fewer &&
          c.pred.latency_s > kFewerDevicesBalancedWithin *
                                 cands_[spatial.front()].pred.latency_s)
        continue;
      if (AlreadyTaken(taken, c.pred.latency_s)) continue;
      taken.push_back(c.pred.latency_s);
      auto value = [&](const Plan& made) -> StatusOr<double> {
        Plan p = made;
        p.broadcast = c.plan.broadcast;
        RETURN_IF_ERROR(SendInt8(&p).status());
        ASSIGN_OR_RETURN(Prediction pr, PredictPlan(p, *model_));
        return pr.latency_s;
      };
      const int tasks = std::max<int>(1, c.plan.tasks.size());
      // The smaller device counts share two candidates' budget.
      const int budget =
          c.made_with->spatial_devices.empty()
              ? kBalanceTaskEvaluations
              : 2 * kBalanceTaskEvaluations / std::max(1, n_ - 2);
      auto b = BalanceStrips(g_, *c.made_with, c.pred.latency_s, value,
                             std::min(kMaxBalanceEvaluations, budget / tasks));
      if (!b.ok() || b->moves == 0) continue;
      char memo[160];
      std::snprintf(memo, sizeof(memo),
                    "%s with its %s moved in %d step%s (%d plans predicted)",
                    c.name.c_str(),
                    c.made_with->tiles == TileShape::k2D ? "tiles' shares"
                                                         : "strips' rows",
                    b->moves, b->moves == 1 ? "" : "s", b->evaluations);
      Consider(c.name + "-balanced", MakePlan(g_, b->options), memo);
      cands_.back().made_with = b->options;
    }
  }

  void SimulateThroughputs() {
    for (auto& c : cands_) {
      if (!c.ok) continue;
      auto t = SimulatedThroughput(c.plan, *model_, k_);
      if (t.ok()) {
        c.pred.throughput_rps = t.value();
      } else {
        c.ok = false;
        c.note = "simulation failed: " + t.status().message();
      }
    }
  }

  // The best candidate. Predictions within kTie of each other are a tie:
  // the model prices a task's layers but not what it costs a worker to
  // start a task (the dispatch, its inputs copied in), so of two plans it
  // predicts alike the one with fewer tasks runs faster (on one laptop,
  // ResNet-50 whole in one task took 39 ms, as 38 strip tasks predicted
  // 0.001 % faster, 68). Among those, the earlier wins (MILP first).
  StatusOr<int> Best() const {
    constexpr double kTie = 1e-3;
    int best = -1;
    for (size_t i = 0; i < cands_.size(); ++i) {
      if (!cands_[i].ok) continue;
      if (best < 0) {
        best = static_cast<int>(i);
        continue;
      }
      const double v = ObjectiveValue(cands_[i].pred, opts_.objective);
      const double b = ObjectiveValue(cands_[best].pred, opts_.objective);
      const bool tie =
          std::abs(v - b) <= kTie * std::max(std::abs(v), std::abs(b));
      const bool fewer =
          cands_[i].plan.tasks.size() < cands_[best].plan.tasks.size();
      if ((!tie && v < b) || (tie && fewer)) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) {
      std::string why;
      for (const auto& c : cands_) why += "\n  " + c.name + ": " + c.note;
      return FailedPrecondition("no plan for model " + g_.name +
                                " fits these devices:" + why);
    }
    return best;
  }

  // The paper's baseline: layers on random devices (mean of 5 seeds).
  PlanAlternative RandomBaseline() const {
    PlanAlternative a;
    a.name = "random";
    int n = 0;
    auto splits = Procedure1Splits(pr_);
    const std::vector<Placement> fixed =
        splits.ok() ? splits.value() : std::vector<Placement>{};
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      const Assignment ra = RandomAssignment(units_, n_, seed, fixed);
      auto p = PlanAssignment(g_, opts_, units_, ra,
                              std::vector<std::string>(units_.size(), ""));
      if (!p.ok()) continue;
      auto pred = PredictPlan(p.value(), *model_);
      if (!pred.ok()) continue;
      if (simulate_) {
        auto t = SimulatedThroughput(p.value(), *model_, k_);
        if (!t.ok()) continue;
        pred->throughput_rps = t.value();
      }
      a.latency_s += pred->latency_s;
      a.throughput_rps += pred->throughput_rps;
      ++n;
    }
    if (n > 0) {
      a.latency_s /= n;
      a.throughput_rps /= n;
      a.note = "baseline, mean of " + std::to_string(n) +
               " random assignments; not a candidate";
    } else {
      a.note = "no random assignment could be built";
    }
    return a;
  }

  // What the plan records of the choice: the winner's prediction and every
  // alternative, compared or not.
  PlanPrediction PredictionOf(const Candidate& w) const {
    PlanPrediction pp;
    pp.objective = ObjectiveName(opts_.objective);
    pp.method = w.name;
    pp.solver = solver_;
    pp.latency_s = w.pred.latency_s;
    pp.throughput_rps = w.pred.throughput_rps;
    pp.concurrency = simulate_ ? k_ : 0;
    pp.devices = DeviceRows(w.plan, w.pred);
    for (const auto& c : cands_) {
      PlanAlternative a;
      a.name = c.name;
      if (c.ok) {
        a.latency_s = c.pred.latency_s;
        a.throughput_rps = c.pred.throughput_rps;
        a.note = c.memo;
      } else {
        a.note = c.note.empty() ? "failed" : c.note;
      }
      pp.alternatives.push_back(a);
    }
    pp.alternatives.push_back(RandomBaseline());
    return pp;
  }

  // The winner as auto's plan, saying why it won.
  Plan Chosen(int best) {
    Candidate& w = cands_[best];
    const PlanPrediction pp = PredictionOf(w);
    const PlanObjective objective = opts_.objective;
    Plan plan = std::move(w.plan);
    const double v = ObjectiveValue(w.pred, objective);
    int compared = 0;
    for (const auto& c : cands_) compared += c.ok;
    std::string judged;
    if (objective == PlanObjective::kThroughput) {
      judged = simulate_ ? " at " + std::to_string(k_) + " in flight, simulated"
                         : ", busiest device (" + std::to_string(n_) +
                               " devices are too many to simulate each plan)";
    }
    // solver_ is what the MILP did for the candidate milp: "optimal" there
    // is for the MILP's cost model, so beside another winner it is said of
    // that candidate, not of the plan.
    const bool milp_said = w.name == "milp" || solver_.empty() ||
                           solver_.rfind("MILP not used", 0) == 0;
    std::string why =
        "auto chose " + w.name + ": predicted " + Value(v, objective) + " (" +
        ObjectiveName(objective) + judged + "), the best of " +
        std::to_string(compared) + " candidates; " +
        (milp_said ? solver_
                   : "the milp candidate, not chosen, was " + solver_);
    if (!w.memo.empty()) why += "; " + w.name + " " + w.memo;
    if (w.name.rfind("milp", 0) != 0 && w.name.rfind("procedure1", 0) != 0) {
      for (auto& d : plan.decisions)
        d.reason = "strategy " + w.name + ": " + d.reason;
    }
    plan.decisions.insert(plan.decisions.begin(),
                          LayerDecision{"*", "auto", why});
    plan.strategy = "auto";
    plan.devices = opts_.devices;
    plan.prediction = pp;
    return plan;
  }

  const Graph& g_;
  const PlanOptions opts_;
  std::shared_ptr<const LatencyModel> model_;
  const std::vector<PlanUnit> units_;
  UnitPricer pr_;
  const int n_;
  const bool simulate_;
  const int k_;
  std::vector<Candidate> cands_;
  std::string solver_;  // what the MILP did
};

}  // namespace

static StatusOr<Plan> PlanAuto(const Graph& g, const PlanOptions& in) {
  ASSIGN_OR_RETURN(PlanOptions opts, AutoOptions(in));
  ASSIGN_OR_RETURN(std::vector<PlanUnit> units, MakeUnits(g));
  return AutoPlanner(g, std::move(opts), std::move(units)).Run();
}

SHOAL_REGISTER_STRATEGY("auto", 0, PlanAuto);

}  // namespace shoal
