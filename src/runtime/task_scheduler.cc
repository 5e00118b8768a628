#include "runtime/task_scheduler.h"

#include <chrono>
#include <thread>
#include <utility>

#include "engine/executor.h"
#include "plan/broadcast.h"
#include "plan/region.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment_slots.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "util/clock.h"

namespace shoal {

TaskScheduler::TaskScheduler(WorkerCore core, WorkerSender* sender)
    : core_(std::move(core)),
      sender_(sender),
      boxes_(core_.opts->name, core_.opts->memory_bytes) {}

void TaskScheduler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void TaskScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status TaskScheduler::Deliver(const std::shared_ptr<Deployment>& d,
                              const RequestMeta& meta,
                              const std::vector<int>& transfers,
                              const Tensor& part, Clock::time_point arrived) {
  const auto now = Clock::now();
  if (arrived == Clock::time_point{} || arrived > now) arrived = now;
  std::lock_guard<std::mutex> lock(mu_);
  for (int xi : transfers) {
    RETURN_IF_ERROR(DeliverLocked(d, meta, xi, part, arrived));
  }
  return Status::Ok();
}

Status TaskScheduler::DeliverLocked(const std::shared_ptr<Deployment>& d,
                                    const RequestMeta& meta, int xi,
                                    const Tensor& part,
                                    Clock::time_point arrived) {
  ASSIGN_OR_RETURN(
      std::optional<ReadyTask> rd,
      boxes_.Deliver(MailboxPlan{&d->plan, d->device, &d->incoming}, meta, xi,
                     part, Clock::now(), arrived));
  if (!rd) return Status::Ok();
  const double waited =
      std::chrono::duration<double, std::milli>(rd->at - rd->first).count();
  const int task = rd->task;
  ready_.Push(Queued{d, std::move(*rd)});
  core_.stats->With([&](WorkerStats& s) {
    s.AddWait(task, waited);
    s.AddQueueDepth(ready_.size());
  });
  cv_.notify_one();
  return Status::Ok();
}

void TaskScheduler::Drop(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  boxes_.Drop(id);
}

std::vector<RequestMeta> TaskScheduler::DropAll() {
  std::lock_guard<std::mutex> lock(mu_);
  return boxes_.DropAll();
}

void TaskScheduler::AddGauges(WorkerGauges* g) {
  std::lock_guard<std::mutex> lock(mu_);
  g->ready_tasks = static_cast<int64_t>(ready_.size());
  g->requests_in_flight = static_cast<int64_t>(boxes_.requests());
  g->mailbox_bytes = boxes_.bytes();
}

void TaskScheduler::Loop() {
  SetKernelThreads(core_.opts->threads);
  while (true) {
    Queued rd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      rd = ready_.Pop();
    }
    // An exception fails this request, never the thread: a worker whose
    // compute thread died would take requests and answer none.
    try {
      RunReady(rd);
    } catch (const std::exception& e) {
      core_.fail(rd.t.meta, WorkerError::kInternal,
                 "task " + rd.dep->plan.tasks[rd.t.task].name + " on " +
                     core_.opts->name +
                     " failed on an unexpected condition: " + e.what());
    }
  }
}

// Runs one task whose inputs are all here and sends its outputs on.
void TaskScheduler::RunReady(Queued& rd) {
  std::vector<Tensor> outs;
  Clock::time_point done;
  if (!ComputeTask(rd, &outs, &done)) return;
  const Task& t = rd.dep->plan.tasks[rd.t.task];
  Sources srcs;
  for (size_t i = 0; i < rd.t.inputs.size(); ++i) {
    srcs[t.fragment.inputs[i]] = &rd.t.inputs[i];
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    srcs[t.fragment.outputs[i]] = &outs[i];
  }
  const OutputRoute route = RouteOutputs(
      rd.dep->plan, rd.dep->outgoing[rd.t.task], rd.dep->device, rd.t.meta.seq);
  if (!SendBroadcasts(rd, srcs, route, done)) return;
  SendDirect(rd, srcs, route, done);
}

// Runs the task (paced to the device's share of a core) and records its
// time; false when the request expired or the task failed, which fails
// the request.
bool TaskScheduler::ComputeTask(Queued& rd, std::vector<Tensor>* outs,
                                Clock::time_point* done) {
  const WorkerOptions& opts = *core_.opts;
  const Deployment& d = *rd.dep;
  const Task& t = d.plan.tasks[rd.t.task];
  if (Clock::now() > rd.t.meta.expiry) {
    core_.fail(rd.t.meta, WorkerError::kRequestExpired,
               "request " + rd.t.meta.id + " expired before task " + t.name +
                   " could run");
    return false;
  }
  auto t0 = Clock::now();
  const bool board = !d.board_seconds.empty();
  double late_ms = -1;  // the host's overrun of the board's time
  if (board) t0 = std::min(t0, std::max(rd.t.board_at, board_free_));
  const double cpu0 = CpuSeconds(opts.threads > 1);
  Status st = d.exec[rd.t.task] ? d.exec[rd.t.task]->Run(rd.t.inputs, outs)
                                : Status::Ok();
  *done = Clock::now();
  if (board) {
    // An emulated board: the class's time for the task, dilated, from
    // when it started in board time.
    const auto until =
        t0 + SteadySeconds(d.board_seconds[rd.t.task] * opts.dilation);
    if (PaceTo(until, 0)) {
      *done = until;
    } else {
      core_.metrics->board_overruns().Increment();
      late_ms =
          std::chrono::duration<double, std::milli>(*done - until).count();
    }
  } else {
    PaceCompute(opts.cpu_fraction, t0, CpuSeconds(opts.threads > 1) - cpu0);
  }
  if (!d.swap_seconds.empty() && d.swap_seconds[rd.t.task] > 0) {
    // Paging from the SD card: I/O wait on top of the compute.
    const double swap_s = d.swap_seconds[rd.t.task] * opts.dilation;
    PaceTo(*done, swap_s);
    *done += SteadySeconds(swap_s);
  }
  if (!board) *done = Clock::now();
  board_free_ = *done;
  const double ms =
      std::chrono::duration<double, std::milli>(*done - t0).count();
  if (d.task_seconds[rd.t.task] != nullptr) {
    d.task_seconds[rd.t.task]->Observe(ms / 1e3);
  }
  core_.metrics->busy_seconds().Increment(ms / 1e3);
  const bool current = core_.deployments->IsCurrent(rd.dep.get());
  core_.stats->With([&](WorkerStats& s) {
    if (current) {  // a draining previous plan's tasks differ
      s.AddRun(rd.t.task, ms);
      s.AddSpan(rd.t.meta.seq, rd.t.task, -1, std::min(rd.t.at, t0), t0, *done);
    }
    s.AddBusy(ms);
    if (late_ms >= 0) s.AddBoardLateTask(late_ms);
  });
  if (!st.ok()) {
    core_.fail(rd.t.meta, WorkerError::kTaskFailed,
               "task " + t.name + " failed: " + st.message());
    return false;
  }
  return true;
}

namespace {

// A tensor message of this request and deployment, without its payload.
void AddressMessage(const RequestMeta& meta, const Deployment& d,
                    rpc::TensorMessage* m) {
  m->set_protocol(kProtocolVersion);
  m->set_request(meta.id);
  m->set_seq(meta.seq);
  m->set_reply_to(meta.reply_to);
  m->set_deployment(d.plan_id);
}

}  // namespace

// Bytes that several devices read go out as broadcast trees. False when
// the request failed.
bool TaskScheduler::SendBroadcasts(const Queued& rd, const Sources& srcs,
                                   const OutputRoute& route,
                                   Clock::time_point done) {
  const Deployment& d = *rd.dep;
  for (const auto& g : route.broadcasts) {
    const Transfer& x = d.plan.transfers[g.front()];
    auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
    if (!part.ok()) {
      core_.fail(rd.t.meta, WorkerError::kInternal, part.status().message());
      return false;
    }
    rpc::TensorMessage header;
    AddressMessage(rd.t.meta, *rd.dep, &header);
    for (int64_t v : part->shape) header.add_shape(v);
    EncodeTensor(*part, d.plan.TransferWire(x), &header);
    sender_->QueueHops(rd.dep, rd.t.meta,
                       SourceHops(d.plan, g, d.device, rd.t.meta.seq),
                       std::move(header), /*readdress_only=*/false, done);
  }
  return true;
}

// Every other outgoing transfer of the task: delivered here when its reader
// runs on this device, queued for the sender otherwise.
void TaskScheduler::SendDirect(const Queued& rd, const Sources& srcs,
                               const OutputRoute& route,
                               Clock::time_point done) {
  const Deployment& d = *rd.dep;
  const Task& t = d.plan.tasks[rd.t.task];
  for (const OutputRoute::Direct& r : route.direct) {
    const int xi = r.transfer;
    const Transfer& x = d.plan.transfers[xi];
    auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
    if (!part.ok()) {
      core_.fail(rd.t.meta, WorkerError::kInternal, part.status().message());
      return;
    }
    if (r.here) {
      if (Status s = Deliver(rd.dep, rd.t.meta, {xi}, *part, done); !s.ok()) {
        // The request fails now, not at its deadline.
        core_.fail(rd.t.meta, WorkerError::kMessageRefused,
                   "task " + t.name + " on " + core_.opts->name +
                       " could not pass on its output: " + s.message());
        return;
      }
      continue;
    }
    OutgoingMessage o;
    o.dep = rd.dep;
    o.meta = rd.t.meta;
    o.dst_device = r.to;
    o.queued = Clock::now();
    o.ready = done;
    AddressMessage(rd.t.meta, *rd.dep, &o.msg);
    o.msg.set_transfer(xi);
    for (int64_t v : part->shape) o.msg.add_shape(v);
    EncodeTensor(*part, d.plan.TransferWire(x), &o.msg);
    sender_->Queue(std::move(o));
  }
}

}  // namespace shoal
