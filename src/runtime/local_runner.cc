#include "runtime/local_runner.h"

#include <chrono>
#include <condition_variable>
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

// What one run's device threads share, under `mu`: each device's mailboxes
// (the worker's, runtime/mailboxes.h) and its queue of tasks whose inputs
// are all there, run in the order a worker runs them (plan/dataflow.h).
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
  std::vector<int> left;  // per device: its tasks of this request not yet run
  OutputBox out_box;
  RunStats stats;
};

RunState::RunState(const Plan& plan, const PlanFlow& f, int64_t seq)
    : p(plan),
      flow(f),
      request(seq),
      meta{"local", seq, "", Clock::time_point::max()},
      ready(plan.devices.size()),
      left(plan.devices.size(), 0),
      stats(EmptyRunStats(plan)) {
  boxes.reserve(p.devices.size());
  for (const auto& d : p.devices) boxes.emplace_back(d.name, 0);
  out_box.output = Tensor(p.output_shape);
  out_box.pending = flow.output_parts;
  for (const auto& t : p.tasks) {
    const int d = p.DeviceOf(t.id, request);
    left[d]++;
    // No transfer would make it ready (a worker refuses such a plan).
    if (flow.incoming[t.id] == 0) ready[d].Push(LocalReady{seq, t.id, {}});
  }
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
  }
  return Status::Ok();
}

// Delivers the transfers `out` leaving a task (or the model input) under
// the lock; a receiver wakes when its last part has arrived.
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

// Runs device `device`'s tasks as they become ready, one at a time, in
// the dataflow's order; returns at the first failure, its own or another
// thread's.
void DeviceLoop(RunState* r,
                const std::vector<std::unique_ptr<Executor>>& executors,
                int threads_per_device, int device) {
  const Plan& p = r->p;
  SetKernelThreads(threads_per_device);
  while (true) {
    LocalReady rd;
    {
      std::unique_lock<std::mutex> lock(r->mu);
      if (r->left[device] == 0) return;
      r->cv.wait(lock,
                 [&] { return !r->ready[device].empty() || !r->failure.ok(); });
      if (!r->failure.ok()) return;
      rd = r->ready[device].Pop();
      r->left[device]--;
    }
    const Task& t = p.tasks[rd.task];
    std::vector<Tensor> outs;
    const auto ts = Clock::now();
    Status st =
        executors[t.id] ? executors[t.id]->Run(rd.inputs, &outs) : Status::Ok();
    const double ms = MsSince(ts);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(r->mu);
      if (r->failure.ok()) r->failure = st.WithContext("task " + t.name);
      r->cv.notify_all();
      return;
    }
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
  }
}

// An exception in one device's thread fails the run, and wakes the
// others, instead of ending the process.
void GuardedDeviceLoop(RunState* r,
                       const std::vector<std::unique_ptr<Executor>>& executors,
                       int threads_per_device, int device) {
  try {
    DeviceLoop(r, executors, threads_per_device, device);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(r->mu);
    if (r->failure.ok()) {
      r->failure = Internal("device " + r->p.devices[device].name +
                            " failed on an unexpected condition: " + e.what());
    }
    r->cv.notify_all();
  }
}

}  // namespace

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
      eo.weight_keys[ws.name] = ws.source + ws.region.ToString();
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
  std::vector<std::thread> threads;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    try {
      threads.emplace_back(GuardedDeviceLoop, &r, std::cref(executors_),
                           opts_.threads_per_device, static_cast<int>(d));
    } catch (const std::system_error& e) {
      // Out of threads (a plan of thousands of devices on a loaded host):
      // the ones started stop at the failure instead of the process
      // ending on a joinable thread's destructor.
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.failure.ok()) {
        r.failure =
            ResourceExhausted("cannot start a thread for each of the plan's " +
                              std::to_string(p.devices.size()) + " devices (" +
                              std::to_string(d) + " started): " + e.what());
      }
      r.cv.notify_all();
      break;
    }
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
