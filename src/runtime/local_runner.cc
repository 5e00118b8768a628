#include "runtime/local_runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

#include "engine/shared_weights.h"
#include "graph/cost.h"
#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "plan/plan_verify.h"
#include "plan/task_weights.h"
#include "runtime/mailboxes.h"
#include "runtime/tensor_codec.h"
#include "util/clock.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;

// Whether transfer `x` goes through a message on a cluster: the model input
// (from the coordinator), the output (to it), and what crosses devices.
bool CrossesWire(const Plan& p, const Transfer& x, int64_t request) {
  return x.src.task == kModelInput || x.dst.task == kModelOutput ||
         p.DeviceOf(x.src.task, request) != p.DeviceOf(x.dst.task, request);
}

// The model output's transfers, filled as they arrive.
struct OutputBox {
  Tensor output;
  int pending = 0;
};

// A task of this run whose inputs are all in.
struct LocalReady {
  int64_t seq = 0;
  int task = 0;
  std::vector<Tensor> inputs;
  ReadyKey key() const { return {seq, task}; }
};

// What one run's pool threads share, under `mu`: each device's mailboxes
// (the worker's, runtime/mailboxes.h) and its queue of tasks whose inputs
// are all there, run in the order a worker runs them (plan/dataflow.h).
// A device runs one task at a time, as a worker's scheduler does: it is
// `scheduled` while it waits in `runnable` or a pool thread runs its task.
struct RunState {
  RunState(const Plan& plan, const PlanFlow& flow, int64_t seq);

  const Plan& p;
  const PlanFlow& flow;
  const int64_t request;
  const RequestMeta meta;
  std::mutex mu;
  std::condition_variable cv;
  Status failure;
  std::vector<Mailboxes> boxes;               // per device
  std::vector<ReadyQueue<LocalReady>> ready;  // per device
  std::vector<char> scheduled;                // per device
  std::deque<int> runnable;  // devices with a ready task and no thread
  size_t left = 0;           // tasks of this request not yet started
  int running = 0;           // tasks being run now
  OutputBox out_box;
  RunStats stats;

  // Queues device `d` for a pool thread if it has a ready task and is
  // neither queued nor running. Called with `mu` held.
  void Schedule(int d) {
    if (scheduled[d] || ready[d].empty()) return;
    scheduled[d] = 1;
    runnable.push_back(d);
  }
};

RunState::RunState(const Plan& plan, const PlanFlow& f, int64_t seq)
    : p(plan),
      flow(f),
      request(seq),
      meta{"local", seq, "", Clock::time_point::max()},
      ready(plan.devices.size()),
      scheduled(plan.devices.size(), 0),
      left(plan.tasks.size()),
      stats(EmptyRunStats(plan)) {
  boxes.reserve(p.devices.size());
  for (const auto& d : p.devices) boxes.emplace_back(d.name, 0);
  out_box.output = Tensor(p.output_shape);
  out_box.pending = flow.output_parts;
  for (const auto& t : p.tasks) {
    const int d = p.DeviceOf(t.id, request);
    // No transfer would make it ready (a worker refuses such a plan).
    if (flow.incoming[t.id] == 0) ready[d].Push(LocalReady{seq, t.id, {}});
  }
  for (size_t d = 0; d < p.devices.size(); ++d) Schedule(static_cast<int>(d));
}

// Puts `part` (transfer `xi`'s source region) where the transfer reads
// it: the output, or its task's mailbox on the device that runs the task.
// Called with `mu` held.
Status Put(RunState* r, int xi, const Tensor& part) {
  const Transfer& x = r->p.transfers[xi];
  if (x.dst.task == kModelOutput) {
    r->out_box.pending--;
    return CopyRegion(part, Region::Full(part.shape), &r->out_box.output,
                      x.dst.region, x.merge);
  }
  const int device = r->p.DeviceOf(x.dst.task, r->request);
  ASSIGN_OR_RETURN(
      std::optional<ReadyTask> rd,
      r->boxes[device].Deliver(MailboxPlan{&r->p, device, &r->flow.incoming},
                               r->meta, xi, part, Clock::now()));
  if (rd) {
    r->ready[device].Push(
        LocalReady{r->request, rd->task, std::move(rd->inputs)});
    r->Schedule(device);
  }
  return Status::Ok();
}

// Delivers the transfers `out` leaving a task (or the model input) under
// the lock; a receiver's device is queued when its last part has arrived.
void Deliver(RunState* r, const std::vector<int>& out,
             const std::map<std::string, const Tensor*>& srcs) {
  const Plan& p = r->p;
  std::lock_guard<std::mutex> lock(r->mu);
  for (int xi : out) {
    const Transfer& x = p.transfers[xi];
    auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
    Status st = part.status();
    if (part.ok()) {
      const WireDtype d = p.TransferWire(x).dtype;
      if (d != WireDtype::kF32 && CrossesWire(p, x, r->request)) {
        // Rounded as the wire dtype carries it, so that this run computes
        // what the workers compute.
        RoundToWireDtype(d, &*part);
      }
      st = Put(r, xi, *part);
    }
    if (!st.ok() && r->failure.ok()) r->failure = st;
  }
  r->cv.notify_all();
}

// Runs task `rd` of device `device` and hands its outputs on.
Status RunTask(RunState* r,
               const std::vector<std::unique_ptr<Executor>>& executors,
               int device, const LocalReady& rd) {
  const Plan& p = r->p;
  const Task& t = p.tasks[rd.task];
  std::vector<Tensor> outs;
  const auto ts = Clock::now();
  Status st =
      executors[t.id] ? executors[t.id]->Run(rd.inputs, &outs) : Status::Ok();
  const double ms = MsSince(ts);
  if (!st.ok()) return st.WithContext("task " + t.name);
  std::map<std::string, const Tensor*> srcs;
  for (size_t i = 0; i < rd.inputs.size(); ++i)
    srcs[t.fragment.inputs[i]] = &rd.inputs[i];
  for (size_t i = 0; i < outs.size(); ++i) {
    srcs[t.fragment.outputs[i]] = &outs[i];
  }
  // In the order a worker hands them on; in memory, every one in place.
  const OutputRoute route =
      RouteOutputs(p, r->flow.outgoing[t.id], device, r->request);
  for (const auto& g : route.broadcasts) Deliver(r, g, srcs);
  std::vector<int> direct;
  for (const auto& d : route.direct) direct.push_back(d.transfer);
  Deliver(r, direct, srcs);
  std::lock_guard<std::mutex> lock(r->mu);
  r->stats.task_ms[t.id] = ms;
  return Status::Ok();
}

// One pool thread: takes the device at the head of `runnable`, runs its
// next ready task, and queues it again if more of its tasks are ready.
// Driven by readiness, not by a loop per device that waits for its
// inputs, so any number of threads runs any number of devices. Returns
// when every task has started, at the first failure, or when nothing can
// become ready any more (a plan whose dataflow never delivers some input:
// an error here, where a loop per device would wait forever).
void PoolLoop(RunState* r,
              const std::vector<std::unique_ptr<Executor>>& executors,
              int threads_per_device) {
  SetKernelThreads(threads_per_device);
  std::unique_lock<std::mutex> lock(r->mu);
  while (true) {
    r->cv.wait(lock, [&] {
      return !r->runnable.empty() || !r->failure.ok() || r->left == 0 ||
             r->running == 0;
    });
    if (!r->failure.ok() || r->left == 0) return;
    if (r->runnable.empty()) {  // and nothing running that could feed it
      r->failure = Internal(std::to_string(r->left) + " of the plan's " +
                            std::to_string(r->p.tasks.size()) +
                            " tasks never received all their inputs");
      r->cv.notify_all();
      return;
    }
    const int device = r->runnable.front();
    r->runnable.pop_front();
    const LocalReady rd = r->ready[device].Pop();
    r->left--;
    r->running++;
    lock.unlock();
    Status st;
    try {
      st = RunTask(r, executors, device, rd);
    } catch (const std::exception& e) {
      // An exception fails the run, and wakes the other threads, instead
      // of ending the process.
      st = Internal("device " + r->p.devices[device].name +
                    " failed on an unexpected condition: " + e.what());
    }
    lock.lock();
    r->running--;
    if (!st.ok() && r->failure.ok()) r->failure = st;
    r->scheduled[device] = 0;
    r->Schedule(device);
    r->cv.notify_all();
  }
}

}  // namespace

size_t LocalPoolThreads(const LocalRunOptions& opts) {
  if (opts.max_threads > 0) return static_cast<size_t>(opts.max_threads);
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(kMinLocalThreads, kLocalThreadsPerCore * cores);
}

LocalRunner::~LocalRunner() = default;

StatusOr<std::unique_ptr<LocalRunner>> LocalRunner::Create(
    const Plan& plan, const WeightStore& model_weights,
    const LocalRunOptions& opts) {
  RETURN_IF_ERROR(VerifyPlan(plan));
  std::unique_ptr<LocalRunner> r(new LocalRunner());
  r->plan_copy_ = plan;
  r->plan_ = &r->plan_copy_;
  r->opts_ = opts;
  r->flow_ = IndexFlow(r->plan_copy_);
  // As on a worker, tasks that read the same slice of a model weight share
  // the engine's copy of it.
  auto shared = std::make_shared<SharedWeights>();
  for (const auto& t : plan.tasks) {
    if (t.fragment.nodes.empty()) {  // a merge point: only forwards inputs
      r->executors_.push_back(nullptr);
      continue;
    }
    ASSIGN_OR_RETURN(WeightStore w, SliceTaskWeights(t, model_weights));
    ExecutorOptions eo;
    eo.backend = opts.backend;
    eo.threads = opts.threads_per_device;
    eo.shared_weights = shared;
    for (const auto& ws : t.weights)
      eo.weight_keys[ws.name] =
          ws.source + ws.region.ToString() +
          (ws.view.empty() ? "" : " of " + ShapeToString(ws.view));
    auto ex = Executor::Create(t.fragment, std::move(w), eo);
    if (!ex.ok()) return ex.status().WithContext("task " + t.name);
    r->executors_.push_back(std::move(ex).value());
  }
  return r;
}

Status LocalRunner::Run(const Tensor& input, Tensor* output, RunStats* stats,
                        int64_t request) {
  const Plan& p = *plan_;
  if (input.shape != p.input_shape) {
    return InvalidArgument("input has shape " + ShapeToString(input.shape) +
                           " but the plan's model expects " +
                           ShapeToString(p.input_shape));
  }
  RunState r(p, flow_, request);
  // What crosses devices, counted as the workers send it (broadcast trees).
  for (const WireHop& h : WireHops(p, request)) CountWireHop(p, h, &r.stats);
  const auto t0 = Clock::now();
  Deliver(&r, flow_.inputs, {{p.input_name, &input}});
  // A bounded pool, never a thread per device: a plan of thousands of
  // devices runs on as many threads as the host has use for.
  const size_t want = std::min(p.devices.size(), LocalPoolThreads(opts_));
  std::vector<std::thread> threads;
  std::string no_thread;
  for (size_t i = 0; i < want; ++i) {
    try {
      threads.emplace_back(PoolLoop, &r, std::cref(executors_),
                           opts_.threads_per_device);
    } catch (const std::system_error& e) {
      // Out of threads on a loaded host: the ones started run every
      // device, more slowly.
      no_thread = e.what();
      break;
    }
  }
  if (threads.empty()) {
    return ResourceExhausted("cannot start a thread to run the plan's " +
                             std::to_string(p.devices.size()) +
                             " devices: " + no_thread);
  }
  for (auto& th : threads) th.join();
  if (!r.failure.ok()) return r.failure;
  if (r.out_box.pending != 0) {
    return Internal("the plan's output was not fully delivered");
  }
  r.stats.latency_ms = MsSince(t0);
  *output = std::move(r.out_box.output);
  if (stats != nullptr) *stats = std::move(r.stats);
  return Status::Ok();
}

}  // namespace shoal
