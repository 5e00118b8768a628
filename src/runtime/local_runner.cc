#include "runtime/local_runner.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "graph/cost.h"
#include "plan/broadcast.h"
#include "plan/plan_verify.h"
#include "plan/task_weights.h"
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

// The inputs a task is waiting for, filled by the senders.
struct Mailbox {
  std::map<std::string, Tensor> inputs;
  int pending = 0;
};

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
  RunStats s = EmptyRunStats(p);
  std::mutex mu;
  std::condition_variable cv;
  Status failure;
  std::vector<Mailbox> boxes(p.tasks.size());
  Mailbox out_box;
  out_box.inputs[p.output_name] = Tensor(p.output_shape);
  for (const auto& t : p.tasks) {
    for (const auto& in : t.fragment.inputs) {
      boxes[t.id].inputs[in] = Tensor(t.fragment.tensors.at(in).shape);
    }
  }
  for (const auto& x : p.transfers) {
    (x.dst.task == kModelOutput ? out_box : boxes[x.dst.task]).pending++;
  }
  // Delivers every transfer leaving `task` (or the model input) under the
  // lock; the receiver wakes when its last part has arrived.
  auto deliver = [&](int task,
                     const std::map<std::string, const Tensor*>& srcs) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& x : p.transfers) {
      if (x.src.task != task) continue;
      Mailbox& box = x.dst.task == kModelOutput ? out_box : boxes[x.dst.task];
      const Tensor& from = *srcs.at(x.src.tensor);
      Status st;
      if (p.wire.dtype != WireDtype::kF32 && CrossesWire(p, x, request)) {
        // Rounded as the wire dtype carries it, so that this run computes
        // what the workers compute.
        auto part = ExtractRegion(from, x.src.region);
        st = part.status();
        if (part.ok()) {
          RoundToWireDtype(p.wire.dtype, &*part);
          st = CopyRegion(*part, Region::Full(part->shape),
                          &box.inputs.at(x.dst.tensor), x.dst.region, x.merge);
        }
      } else {
        st = CopyRegion(from, x.src.region, &box.inputs.at(x.dst.tensor),
                        x.dst.region, x.merge);
      }
      if (!st.ok() && failure.ok()) failure = st;
      box.pending--;
    }
    cv.notify_all();
  };
  // What crosses devices, counted as the workers send it (broadcast trees).
  for (const WireHop& h : WireHops(p, request)) CountWireHop(p, h, &s);
  const auto t0 = Clock::now();
  deliver(kModelInput, {{p.input_name, &input}});

  auto device_loop = [&](int device) {
    SetKernelThreads(opts_.threads_per_device);
    for (const auto& t : p.tasks) {
      if (p.DeviceOf(t.id, request) != device) continue;
      std::vector<Tensor> ins;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock,
                [&] { return boxes[t.id].pending == 0 || !failure.ok(); });
        if (!failure.ok()) return;
        for (const auto& name : t.fragment.inputs) {
          ins.push_back(std::move(boxes[t.id].inputs.at(name)));
        }
      }
      std::vector<Tensor> outs;
      const auto ts = Clock::now();
      Status st =
          executors_[t.id] ? executors_[t.id]->Run(ins, &outs) : Status::Ok();
      const double ms = MsSince(ts);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (failure.ok()) failure = st.WithContext("task " + t.name);
        cv.notify_all();
        return;
      }
      std::map<std::string, const Tensor*> srcs;
      for (size_t i = 0; i < ins.size(); ++i)
        srcs[t.fragment.inputs[i]] = &ins[i];
      for (size_t i = 0; i < outs.size(); ++i) {
        srcs[t.fragment.outputs[i]] = &outs[i];
      }
      deliver(t.id, srcs);
      std::lock_guard<std::mutex> lock(mu);
      s.task_ms[t.id] = ms;
    }
  };
  // An exception in one device's thread fails the run, and wakes the
  // others, instead of ending the process.
  auto guarded_loop = [&](int device) {
    try {
      device_loop(device);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      if (failure.ok()) {
        failure = Internal("device " + p.devices[device].name +
                           " failed on an unexpected condition: " + e.what());
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (size_t d = 0; d < p.devices.size(); ++d)
    threads.emplace_back(guarded_loop, d);
  for (auto& th : threads) th.join();
  if (!failure.ok()) return failure;
  if (out_box.pending != 0) {
    return Internal("the plan's output was not fully delivered");
  }
  s.latency_ms = MsSince(t0);
  *output = std::move(out_box.inputs.at(p.output_name));
  if (stats != nullptr) *stats = std::move(s);
  return Status::Ok();
}

}  // namespace shoal
