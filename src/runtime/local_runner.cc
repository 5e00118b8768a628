#include "runtime/local_runner.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "graph/cost.h"
#include "plan/broadcast.h"
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

// What one run's device threads share, under `mu`: each device's mailboxes
// (the worker's, runtime/mailboxes.h) and the tasks whose inputs are all
// there.
struct RunState {
  RunState(const Plan& plan, int64_t seq);

  const Plan& p;
  const int64_t request;
  const RequestMeta meta;
  std::vector<int> incoming;  // per task, as a deployment counts them
  std::mutex mu;
  std::condition_variable cv;
  Status failure;
  std::vector<Mailboxes> boxes;              // per device
  std::map<int, std::vector<Tensor>> ready;  // by task: its inputs
  OutputBox out_box;
  RunStats stats;
};

RunState::RunState(const Plan& plan, int64_t seq)
    : p(plan),
      request(seq),
      meta{"local", seq, "", Clock::time_point::max()},
      incoming(plan.tasks.size()),
      stats(EmptyRunStats(plan)) {
  boxes.reserve(p.devices.size());
  for (const auto& d : p.devices) boxes.emplace_back(d.name, 0);
  out_box.output = Tensor(p.output_shape);
  for (const auto& x : p.transfers) {
    if (x.dst.task == kModelOutput) {
      out_box.pending++;
    } else {
      incoming[x.dst.task]++;
    }
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
      r->boxes[device].Deliver(MailboxPlan{&r->p, device, &r->incoming},
                               r->meta, xi, part, Clock::now()));
  if (rd) r->ready[rd->task] = std::move(rd->inputs);
  return Status::Ok();
}

// Delivers every transfer leaving `task` (or the model input) under the
// lock; the receiver wakes when its last part has arrived.
void Deliver(RunState* r, int task,
             const std::map<std::string, const Tensor*>& srcs) {
  const Plan& p = r->p;
  std::lock_guard<std::mutex> lock(r->mu);
  for (size_t xi = 0; xi < p.transfers.size(); ++xi) {
    const Transfer& x = p.transfers[xi];
    if (x.src.task != task) continue;
    auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
    Status st = part.status();
    if (part.ok()) {
      const WireDtype d = p.TransferWire(x).dtype;
      if (d != WireDtype::kF32 && CrossesWire(p, x, r->request)) {
        // Rounded as the wire dtype carries it, so that this run computes
        // what the workers compute.
        RoundToWireDtype(d, &*part);
      }
      st = Put(r, static_cast<int>(xi), *part);
    }
    if (!st.ok() && r->failure.ok()) r->failure = st;
  }
  r->cv.notify_all();
}

// Runs device `device`'s tasks in plan order, each once its inputs have
// arrived; returns at the first failure, its own or another thread's.
void DeviceLoop(RunState* r,
                const std::vector<std::unique_ptr<Executor>>& executors,
                int threads_per_device, int device) {
  const Plan& p = r->p;
  SetKernelThreads(threads_per_device);
  for (const auto& t : p.tasks) {
    if (p.DeviceOf(t.id, r->request) != device) continue;
    std::vector<Tensor> ins;
    {
      std::unique_lock<std::mutex> lock(r->mu);
      r->cv.wait(lock,
                 [&] { return r->ready.count(t.id) > 0 || !r->failure.ok(); });
      if (!r->failure.ok()) return;
      ins = std::move(r->ready.at(t.id));
      r->ready.erase(t.id);
    }
    std::vector<Tensor> outs;
    const auto ts = Clock::now();
    Status st =
        executors[t.id] ? executors[t.id]->Run(ins, &outs) : Status::Ok();
    const double ms = MsSince(ts);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(r->mu);
      if (r->failure.ok()) r->failure = st.WithContext("task " + t.name);
      r->cv.notify_all();
      return;
    }
    std::map<std::string, const Tensor*> srcs;
    for (size_t i = 0; i < ins.size(); ++i)
      srcs[t.fragment.inputs[i]] = &ins[i];
    for (size_t i = 0; i < outs.size(); ++i) {
      srcs[t.fragment.outputs[i]] = &outs[i];
    }
    Deliver(r, t.id, srcs);
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
  for (const auto& t : plan.tasks) {
    if (t.fragment.nodes.empty()) {  // a merge point: only forwards inputs
      r->executors_.push_back(nullptr);
      continue;
    }
    ASSIGN_OR_RETURN(WeightStore w, SliceTaskWeights(t, model_weights));
    ExecutorOptions eo;
    eo.backend = opts.backend;
    eo.threads = opts.threads_per_device;
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
  RunState r(p, request);
  // What crosses devices, counted as the workers send it (broadcast trees).
  for (const WireHop& h : WireHops(p, request)) CountWireHop(p, h, &r.stats);
  const auto t0 = Clock::now();
  Deliver(&r, kModelInput, {{p.input_name, &input}});
  std::vector<std::thread> threads;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    threads.emplace_back(GuardedDeviceLoop, &r, std::cref(executors_),
                         opts_.threads_per_device, static_cast<int>(d));
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
