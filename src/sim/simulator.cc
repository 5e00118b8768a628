#include "sim/simulator.h"

#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <tuple>
#include <unordered_map>

#include "cluster/cpu_quota.h"
#include "cluster/swap.h"
#include "graph/cost.h"
#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "sim/sim_core.h"
#include "util/stats.h"

namespace shoal {
namespace sim_core {

StatusOr<double> Sim::TaskSeconds(int task, int dev) {
  const Task& t = p_.tasks[task];
  if (t.devices.size() == 1 && single_s_[task] >= 0) return single_s_[task];
  const int64_t key = int64_t{task} * int64_t(p_.devices.size()) + dev;
  if (t.devices.size() > 1) {
    auto it = replica_s_.find(key);
    if (it != replica_s_.end()) return it->second;
  }
  double s = 0;
  if (!t.fragment.nodes.empty()) {
    auto g = m_.GraphSeconds(map_[dev], t.fragment);
    if (!g.ok()) return g.status().WithContext("task " + t.name);
    s = g.value();
  }
  if (t.devices.size() == 1) {
    single_s_[task] = s;
  } else {
    replica_s_[key] = s;
  }
  return s;
}

double Sim::CpuDone(int d, double from, double cpu_s) {
  if (cpu_s <= 0) return from;
  const CpuQuota q = m_.Quota(map_[d]);
  if (o_.cpu_quota && q.limited()) return dev_[d].clock.Run(from, cpu_s);
  return from + cpu_s;
}

void Sim::Complete(int req) {
  Request& r = req_[req];
  r.done = true;
  res_.latency_ms[req] = (now_ - r.start) * 1e3;
  if (o_.trace) {
    res_.spans.push_back(
        {TraceSpan::Kind::kRequest, -1, Seq(req), -1, r.start, r.start, now_});
  }
  res_.wall_s = std::max(res_.wall_s, now_);
  CountBytes(req);
  r.pending = {};
  r.first = {};
  if (next_ < o_.requests) StartRequest(next_++);
}

Status Sim::StartNext(int d) {
  DeviceState& ds = dev_[d];
  if (ds.ready.empty()) return Status::Ok();
  const Ready rd = ds.ready.Pop();
  ASSIGN_OR_RETURN(double s, TaskSeconds(rd.task, d));
  const CpuQuota q = m_.Quota(map_[d]);
  // The worker holds a task until CPU time / fraction has passed (its
  // pacing); the cgroup quota can make it later still, when earlier work
  // used up the current period's quota.
  double end = now_ + s;
  if (o_.cpu_quota && q.limited()) {
    end = std::max(end, ds.clock.Run(now_, s * q.fraction()));
  }
  // Paging from the SD card waits on I/O, not on the CPU quota.
  if (!swap_s_.empty()) end += swap_s_[size_t(rd.task) * dev_.size() + d];
  ds.busy = true;
  ds.busy_since = now_;
  ds.ready_since = rd.at;
  Push(end, Kind::kTaskDone, d, int(rd.seq - 1), rd.task);
  return Status::Ok();
}

Status Sim::TaskDone(int d, int req, int task) {
  DeviceState& ds = dev_[d];
  const double ms = (now_ - ds.busy_since) * 1e3;
  ds.r.busy_ms += ms;
  ds.r.task_runs++;
  runs_[task].push_back({d, static_cast<float>(ms)});
  if (o_.trace) {
    res_.spans.push_back({TraceSpan::Kind::kTask, d, Seq(req), task,
                          ds.ready_since, ds.busy_since, now_});
  }
  // Broadcasts first, then the other sends, as the worker queues them.
  const OutputRoute& route = Route(req, d, task);
  for (const auto& g : route.broadcasts) {
    SendChunks(req, d, TreeOf(req, d, g, true), bytes_[g.front()]);
  }
  for (const OutputRoute::Direct& dx : route.direct) {
    if (dx.here) {
      Arrive(req, dx.transfer);  // delivered in place; the device is still busy
    } else {
      Enqueue(d, req, dx.transfer);
    }
  }
  ds.busy = false;
  return StartNext(d);
}

void Sim::IndexPlan() {
  const int nt = static_cast<int>(p_.tasks.size());
  flow_ = IndexFlow(p_);
  bytes_.resize(p_.transfers.size());
  single_s_.assign(nt, -1);
  runs_.resize(nt);
  for (const auto& t : p_.tasks) {
    replicas_ |= t.devices.size() > 1;
    one_dev_.push_back(t.devices.size() == 1 ? t.devices[0] : -1);
  }
  for (size_t i = 0; i < p_.transfers.size(); ++i) {
    bytes_[i] = p_.WireBytes(p_.transfers[i]);
  }
  IndexSwap();
}

void Sim::IndexSwap() {
  std::vector<const DeviceSpec*> specs;
  for (int m : map_) specs.push_back(&m_.cluster().devices[m]);
  swap_s_ = SwapTable(p_, specs);
}

void Sim::InitDevices() {
  const int nd = static_cast<int>(p_.devices.size());
  std::mt19937_64 rng(o_.seed);
  dev_.resize(nd);
  for (int d = 0; d < nd; ++d) {
    DeviceState& ds = dev_[d];
    ds.free_senders = std::max(1, o_.sender_threads);
    ds.r.name = p_.devices[d].name;
    ds.r.queue_histogram.assign(kQueueHistogramBins, 0);
    const CpuQuota q = m_.Quota(map_[d]);
    std::uniform_real_distribution<double> phase(0, q.period_s);
    // The idle worker's own CPU (gRPC's timers) comes out of every period's
    // quota; tasks still convert paced time to CPU at the full fraction.
    ds.clock = QuotaClock(m_.QuotaLeft(map_[d]), q.limited() ? phase(rng) : 0);
  }
}

void Sim::RunEvents() {
  while (!q_.empty() && error_.ok()) {
    const Event e = q_.top();
    q_.pop();
    now_ = e.t;
    ++events_;
    Dispatch(e);
  }
}

void Sim::Dispatch(const Event& e) {
  switch (e.kind) {
    case Kind::kArrive:
      Receive(e.req, e.item);
      break;
    case Kind::kReceived:
      Arrive(e.req, e.item);
      break;
    case Kind::kTaskDone:
      if (Status s = TaskDone(e.dev, e.req, e.item); !s.ok()) error_ = s;
      break;
    case Kind::kSendDone:
      dev_[e.dev].free_senders++;
      Pump(e.dev);
      Receive(e.req, e.item);
      break;
    case Kind::kChunkSent:
      dev_[e.dev].free_senders++;
      Pump(e.dev);
      ReceiveChunk(e.item);
      break;
    case Kind::kChunkArrive:
      ReceiveChunk(e.item);
      break;
    case Kind::kChunkReceived:
      ChunkArrive(e.item);
      break;
  }
}

Status Sim::CheckAllDone() const {
  for (int i = 0; i < o_.requests; ++i) {
    if (!req_[i].done) {
      return Internal("simulation ended with request " + std::to_string(i + 1) +
                      " unfinished (a task never got all its inputs)");
    }
  }
  return Status::Ok();
}

void Sim::SummarizeDevices() {
  std::map<int, std::vector<double>> by_device;
  for (size_t t = 0; t < runs_.size(); ++t) {
    by_device.clear();
    for (const auto& [d, ms] : runs_[t]) by_device[d].push_back(ms);
    for (auto& [d, ms] : by_device) {
      const int64_t n = ms.size();
      const double med = Median(std::move(ms));
      dev_[d].r.compute_ms_median += med;
      dev_[d].r.tasks.push_back({int(t), n, med});
    }
  }
  for (auto& ds : dev_) {
    ds.r.elapsed_ms = res_.wall_s * 1e3;
    res_.devices.push_back(std::move(ds.r));
  }
}

StatusOr<SimResult> Sim::Run() {
  IndexPlan();
  InitDevices();
  req_.resize(o_.requests);
  res_.latency_ms.assign(o_.requests, 0);
  for (int k = 0; k < o_.concurrency && next_ < o_.requests; ++k) {
    StartRequest(next_++);
  }
  RunEvents();
  RETURN_IF_ERROR(error_);
  RETURN_IF_ERROR(CheckAllDone());
  SummarizeDevices();
  res_.events = events_;
  return std::move(res_);
}

}  // namespace sim_core

using sim_core::Sim;

namespace {

// What the simulation indexes by, checked in time linear in the plan (the
// full VerifyPlan, which LoadPlan and MakePlan run, checks regions too).
Status CheckIndices(const Plan& p) {
  const int nt = static_cast<int>(p.tasks.size());
  const int nd = static_cast<int>(p.devices.size());
  if (nd == 0) return InvalidArgument("plan has no devices");
  if (p.input_device < 0 || p.input_device >= nd || p.output_device < 0 ||
      p.output_device >= nd) {
    return InvalidArgument("plan's input/output device is out of range");
  }
  for (int i = 0; i < nt; ++i) {
    const Task& t = p.tasks[i];
    if (t.id != i) return InvalidArgument("task ids must be 0..n-1 in order");
    if (t.devices.empty())
      return InvalidArgument("task " + t.name + " has no device");
    for (int d : t.devices) {
      if (d < 0 || d >= nd) {
        return InvalidArgument("task " + t.name + " names device " +
                               std::to_string(d) + " of " + std::to_string(nd));
      }
    }
  }
  for (const auto& x : p.transfers) {
    const bool src_ok =
        x.src.task == kModelInput || (x.src.task >= 0 && x.src.task < nt);
    const bool dst_ok =
        x.dst.task == kModelOutput || (x.dst.task >= 0 && x.dst.task < nt);
    if (!src_ok || !dst_ok ||
        (x.src.task >= 0 && x.dst.task >= 0 && x.src.task >= x.dst.task)) {
      return InvalidArgument("transfer " + std::to_string(x.src.task) + " -> " +
                             std::to_string(x.dst.task) +
                             " names an unknown task or goes backwards");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<int>> MapPlanDevices(const Plan& p, const Cluster& c) {
  std::map<std::string, int> by_name;
  for (size_t i = 0; i < c.devices.size(); ++i) by_name[c.devices[i].name] = i;
  std::vector<int> map;
  bool all_named = true;
  for (const auto& d : p.devices) all_named &= by_name.count(d.name) > 0;
  if (!all_named && p.devices.size() != c.devices.size()) {
    for (const auto& d : p.devices) {
      if (!by_name.count(d.name)) {
        return InvalidArgument(
            "plan device " + d.name + " is not in the cluster (" +
            std::to_string(c.devices.size()) + " devices), and the plan has " +
            std::to_string(p.devices.size()) + " devices, so they cannot be " +
            "matched by position either");
      }
    }
  }
  for (size_t i = 0; i < p.devices.size(); ++i) {
    map.push_back(all_named ? by_name[p.devices[i].name] : int(i));
  }
  return map;
}

StatusOr<SimResult> Simulate(const Plan& p, const LatencyModel& m,
                             const SimOptions& opts) {
  if (opts.requests < 1 || opts.concurrency < 1) {
    return InvalidArgument("requests and concurrency must be >= 1");
  }
  RETURN_IF_ERROR(CheckIndices(p));
  ASSIGN_OR_RETURN(std::vector<int> map, MapPlanDevices(p, m.cluster()));
  Sim sim(p, m, opts, std::move(map));
  return sim.Run();
}

double SteadyThroughput(const SimResult& r, int concurrency) {
  // Little's law over the requests that ran with `concurrency` in flight:
  // throughput = requests in flight / their mean latency. Fewer than that
  // run at the end (no request left to start) and, with replicas, the
  // first ones meet idle devices; both are left out.
  const int n = static_cast<int>(r.latency_ms.size());
  const int k = std::max(concurrency, 1);
  const int a = n / 4, b = n - k;
  if (b - a < 4) return r.wall_s > 0 ? n / r.wall_s : 0.0;
  double sum_ms = 0;
  for (int i = a; i < b; ++i) sum_ms += r.latency_ms[i];
  return sum_ms > 0 ? k * 1e3 * (b - a) / sum_ms : 0.0;
}
}  // namespace shoal
