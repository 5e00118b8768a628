#include "runtime/deployment.h"

#include <grpcpp/channel.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/shared_arena.h"
#include "engine/shared_weights.h"
#include "graph/cost.h"
#include "plan/dataflow.h"
#include "plan/json_parse.h"
#include "plan/plan_cost.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "util/units.h"

namespace shoal {

namespace {

// The op of a fragment's node with the most multiply-accumulates (its
// first node when none has any): what a task is, for the compute-time
// histogram's `kind` label, without a series per task of every plan.
std::string TaskKind(const Graph& g) {
  std::string kind = g.nodes.empty() ? "none" : g.nodes.front().op;
  int64_t most = 0;
  for (const auto& n : g.nodes) {
    auto c = ComputeNodeCost(g, n);
    if (c.ok() && c->macs > most) {
      most = c->macs;
      kind = n.op;
    }
  }
  return kind;
}

// Opens the connections to the devices this one sends to now, while
// every device is idle: a throttled device flooded with partial sums
// mid-request may not finish a new connection's handshake within gRPC's
// connect timeout (docs/BENCHMARKS.md). A peer that does not answer in
// time is not an error here; the request that needs it fails naming it.
void ConnectToReceivers(
    const Deployment& d,
    const std::vector<std::shared_ptr<grpc::Channel>>& channels) {
  const Plan& p = d.plan;
  std::set<int> receivers;
  for (const Transfer& x : p.transfers) {
    if (x.src.task < 0 || x.dst.task < 0 || !d.mine[x.src.task]) continue;
    for (int dv : p.tasks[x.dst.task].devices) {
      if (dv != d.device) receivers.insert(dv);
    }
  }
  for (int dv : receivers) channels[dv]->GetState(/*try_to_connect=*/true);
  const auto deadline =
      std::chrono::system_clock::now() + std::chrono::seconds(5);
  for (int dv : receivers) channels[dv]->WaitForConnected(deadline);
}

// The request's plan, checked.
StatusOr<Plan> ParsePlan(const std::string& json) {
  ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(json, "plan"));
  ASSIGN_OR_RETURN(Plan plan, PlanFromJson(j));
  RETURN_IF_ERROR(VerifyPlan(plan));
  return plan;
}

// Which tasks run here, and the transfers into and out of each task.
void IndexTasks(Deployment* d) {
  const Plan& p = d->plan;
  const int n = static_cast<int>(p.tasks.size());
  d->mine.assign(n, false);
  for (const auto& t : p.tasks) {
    for (int dv : t.devices) d->mine[t.id] = d->mine[t.id] || dv == d->device;
  }
  PlanFlow f = IndexFlow(p);
  d->incoming = std::move(f.incoming);
  d->outgoing = std::move(f.outgoing);
}

// The request's weight references, by task.
using TaskWeightRefs = std::map<int, const rpc::TaskWeights*>;

// The activation and weight bytes of the tasks here, and the cached blobs
// they read; returns the largest weight. Fails on a task nothing starts or
// a weight that is not in the cache.
StatusOr<int64_t> SizeTasks(const TaskWeightRefs& tw, BlobCache* cache,
                            Deployment* d) {
  std::set<std::string> used;
  // The engine reorders each weight into its own layout while the plain
  // copy read from the cache still exists: for a moment the largest
  // weight is held twice.
  int64_t largest_weight = 0;
  for (const auto& t : d->plan.tasks) {
    if (!d->mine[t.id]) continue;
    if (d->incoming[t.id] == 0) {
      return Unsupported("task " + t.name +
                         " has no input transfer: nothing would start it");
    }
    // The engine's arena is planned the same way (engine/memory_plan.h).
    d->activation_bytes =
        std::max(d->activation_bytes, PeakActivationBytes(t.fragment));
    if (!tw.count(t.id)) continue;
    for (const auto& w : tw.at(t.id)->weights()) {
      const int64_t size = cache->Size(w.hash());
      if (size < 0) {
        return FailedPrecondition("weight blob " + w.hash() + " of task " +
                                  t.name + " was not uploaded");
      }
      if (used.insert(w.hash()).second) d->weight_bytes += size;
      largest_weight = std::max(largest_weight, size);
    }
  }
  d->blob_hashes = used;
  return largest_weight;
}

void ResolveMetrics(WorkerMetrics* metrics, Deployment* d) {
  const Plan& p = d->plan;
  d->task_seconds.assign(p.tasks.size(), nullptr);
  for (const auto& t : p.tasks) {
    if (!d->mine[t.id]) continue;
    d->tasks_here++;
    d->task_seconds[t.id] = metrics->TaskSeconds(TaskKind(t.fragment));
  }
  for (const auto& dv : p.devices) {
    d->sent_to.push_back(metrics->BytesSent(dv.name));
    d->received_from.push_back(metrics->BytesReceived(dv.name));
  }
  d->sent_to_coordinator = metrics->BytesSent("coordinator");
}

// Fills the reply's sizes and refuses a deployment that does not fit the
// memory `budget` beside the `held` bytes of the one kept alongside.
Status CheckBudget(const Deployment& d, int64_t largest_weight, int64_t held,
                   int64_t budget, rpc::DeployReply* rep) {
  const int64_t need = DeviceWeightMemory(d.weight_bytes, largest_weight) +
                       d.activation_bytes + held;
  rep->set_weight_bytes(d.weight_bytes);
  rep->set_activation_bytes(d.activation_bytes);
  rep->set_budget_bytes(budget);
  if (budget > 0 && need > budget) {
    // Over only for the plan kept alongside: once that one is released,
    // this one fits (serve drains, then deploys it alone).
    const bool alone_fits = need - held <= budget;
    return Status(
        held > 0 && alone_fits ? Code::kResourceExhausted
                               : Code::kFailedPrecondition,
        "refuses the deployment: it needs " + MiB(need) + " (" +
            MiB(d.weight_bytes) + " of weights + " + MiB(largest_weight) +
            " while its largest weight is reordered + " +
            MiB(d.activation_bytes) + " of activations" +
            (held > 0 ? " + " + MiB(held) +
                            " held beside it (the deployment kept alongside, "
                            "graphs being profiled)"
                      : std::string()) +
            ") but its memory budget is " + MiB(budget));
  }
  return Status::Ok();
}

// A task at a time: its weights read from the cache, handed to the
// engine, which keeps its own layout and drops the plain copy, so the
// plain weights of one task at most are in memory beside the engine's.
// Tasks that read the same blob (a strip's interior and its edges) share
// the engine's copy, so each weight is held once, as SizeTasks counts it;
// and they share one activation arena, the largest task's (as SizeTasks
// counts activations), which the compute thread uses for one task at a
// time.
Status MakeExecutors(const TaskWeightRefs& tw, const DeploymentContext& ctx,
                     Deployment* d) {
  d->exec.resize(d->plan.tasks.size());
  if (ctx.board) d->board_seconds.assign(d->plan.tasks.size(), 0.0);
  auto shared = std::make_shared<SharedWeights>();
  auto arena = std::make_shared<SharedArena>();
  for (const auto& t : d->plan.tasks) {
    if (!d->mine[t.id] || t.fragment.nodes.empty()) continue;
    WeightStore store;
    ExecutorOptions eo;
    eo.backend = ctx.backend;
    eo.threads = ctx.threads;
    eo.shared_weights = shared;
    eo.shared_arena = arena;
    if (tw.count(t.id)) {
      for (const auto& w : tw.at(t.id)->weights()) {
        eo.weight_keys[w.name()] = w.hash() + (w.int8() ? ":int8" : ":f32");
        Shape shape(w.shape().begin(), w.shape().end());
        auto tensor = ctx.cache->Read(w.hash(), shape, w.int8());
        if (!tensor.ok()) {
          return tensor.status().WithContext("task " + t.name + ", weight " +
                                             w.name());
        }
        store[w.name()] = std::move(tensor).value();
      }
    }
    auto ex = Executor::Create(t.fragment, std::move(store), eo);
    if (!ex.ok()) return ex.status().WithContext("task " + t.name);
    d->exec[t.id] = std::move(ex).value();
    if (ctx.board) {
      // The planner's price of the same fragment (sim/latency_model.h).
      double s = 0;
      for (const auto& n : t.fragment.nodes) {
        auto c = ComputeNodeCost(t.fragment, n);
        if (!c.ok()) return c.status().WithContext("task " + t.name);
        s += BoardNodeSeconds(ctx.board_rates, *c);
      }
      d->board_seconds[t.id] = s;
    }
  }
  return Status::Ok();
}

// A deployment's weights and engines go back to the system with it.
void DeleteAndTrim(Deployment* d) {
  delete d;
  TrimFreedMemory();
}

}  // namespace

void TrimFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

StatusOr<std::shared_ptr<Deployment>> BuildDeployment(
    const rpc::DeployRequest& req, const DeploymentContext& ctx, int64_t held,
    rpc::DeployReply* rep) {
  std::shared_ptr<Deployment> d(new Deployment, DeleteAndTrim);
  d->id = req.deployment();
  d->plan_id = req.plan_id();
  ASSIGN_OR_RETURN(d->plan, ParsePlan(req.plan_json()));
  const Plan& p = d->plan;
  d->device = req.device();
  if (d->device < 0 || d->device >= static_cast<int>(p.devices.size()) ||
      req.peers_size() != static_cast<int>(p.devices.size())) {
    return InvalidArgument("device index or peer list does not fit the plan");
  }
  d->peers.assign(req.peers().begin(), req.peers().end());
  IndexTasks(d.get());
  TaskWeightRefs tw;
  for (const auto& t : req.tasks()) tw[t.task()] = &t;
  ASSIGN_OR_RETURN(const int64_t largest_weight,
                   SizeTasks(tw, ctx.cache, d.get()));
  ResolveMetrics(ctx.metrics, d.get());
  // A board that swaps takes what does not fit, paying for it in time.
  RETURN_IF_ERROR(CheckBudget(*d, largest_weight, held,
                              ctx.swap != nullptr ? 0 : ctx.memory_bytes, rep));
  RETURN_IF_ERROR(MakeExecutors(tw, ctx, d.get()));
  if (ctx.swap != nullptr) {
    d->swap_seconds =
        SwapSecondsPerTask(d->plan, d->device, *ctx.swap, ctx.memory_bytes);
    bool any = false;
    for (double s : d->swap_seconds) any |= s > 0;
    if (!any) d->swap_seconds.clear();
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const auto& addr : d->peers) {
    channels.push_back(ctx.dial(addr));
    d->stubs.push_back(rpc::Worker::NewStub(channels.back()));
  }
  if (ctx.connect_now) ConnectToReceivers(*d, channels);
  return d;
}

}  // namespace shoal
