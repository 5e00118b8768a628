#include "sim/simulator.h"

#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <tuple>
#include <unordered_map>

#include "cluster/cpu_quota.h"
#include "graph/cost.h"
#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "util/stats.h"

namespace shoal {

namespace {

constexpr int kQueueHistogramBins = 17;  // as the worker: 0..15, 16 or more

// kArrive: a message reached its device (its receive CPU still to run);
// kReceived: the worker has it. kChunkArrive, kChunkReceived, kChunkSent:
// the same for a chunk of a broadcast (plan/broadcast.h), `item` indexing
// Sim::chunks_.
enum class Kind : uint8_t {
  kArrive,
  kReceived,
  kTaskDone,
  kSendDone,
  kChunkArrive,
  kChunkReceived,
  kChunkSent
};

struct Event {
  double t;
  uint64_t order;  // ties: first scheduled, first done
  Kind kind;
  int dev;
  int req;   // request index (seq - 1)
  int item;  // transfer index or task id
  bool operator>(const Event& o) const {
    return t != o.t ? t > o.t : order > o.order;
  }
};

struct Msg {
  int req, xfer;
  double queued;
  int chunk = -1;  // a broadcast's chunk: its index in Sim::chunks_
};

// One hop of a broadcast: the chunks for `device`, which delivers
// `deliver` and passes the chunks on for `relay` as each arrives.
struct Hop {
  int req = 0;
  int device = 0;
  const RelayHop* tree = nullptr;  // its place in the tree (Sim::trees_)
  std::vector<int> below;  // the hops it forwards to, once a chunk is in
  int chunks = 0, arrived = 0;
};

struct Chunk {
  int hop = 0;
  int64_t bytes = 0;
};

struct Ready {
  int64_t seq;
  int task;
  double at;  // its last input in
  ReadyKey key() const { return {seq, task}; }
};

struct DeviceState {
  ReadyQueue<Ready> ready;
  bool busy = false;
  double busy_since = 0;
  double ready_since = 0;  // the running task's last input
  std::deque<Msg> out;
  int free_senders = 0;
  double link_free = 0;
  QuotaClock clock;
  SimDeviceResult r;
};

struct Request {
  double start = 0;
  std::vector<int> pending;   // per task: transfers still to arrive
  std::vector<double> first;  // per task: first arrival
  int out_left = 0;
  bool done = false;
};

class Sim {
 public:
  Sim(const Plan& p, const LatencyModel& m, const SimOptions& o,
      std::vector<int> map)
      : p_(p), m_(m), o_(o), map_(std::move(map)) {}

  StatusOr<SimResult> Run();

 private:
  void Push(double t, Kind k, int dev, int req, int item) {
    q_.push(Event{t, order_++, k, dev, req, item});
  }
  int64_t Seq(int req) const { return req + 1; }
  // Plan::DeviceOf, without the modulo for tasks on one device.
  int Dev(int task, int64_t seq) const {
    if (task >= 0 && one_dev_[task] >= 0) return one_dev_[task];
    return p_.DeviceOf(task, seq);
  }
  // Per-task and per-transfer indexes of the plan: bytes, inputs counted,
  // transfers out, tasks on one device.
  void IndexPlan();
  // Each device's senders, name, histogram and quota clock (its phase in
  // the quota period drawn from the seed).
  void InitDevices();
  // Processes events in time order until none is left or one fails.
  void RunEvents();
  void Dispatch(const Event& e);
  // Every request answered, else the simulation is broken.
  Status CheckAllDone() const;
  // Per device: the median compute time of each task it ran, and totals.
  void SummarizeDevices();
  StatusOr<double> TaskSeconds(int task, int dev);
  void StartRequest(int req);
  void Arrive(int req, int xfer);
  // A message from another device or the coordinator: the receiving worker
  // spends its per-message CPU before the task sees it.
  void Receive(int req, int xfer);
  // When `cpu_s` of host CPU started at `from` on device d is done: at
  // once on an unlimited device (other threads, other cores), else as the
  // device's quota allows, shared with its compute.
  double CpuDone(int d, double from, double cpu_s);
  void Complete(int req);
  // What request `req` moved between devices, counted as the runtime counts
  // (plan/run_stats.h CountCommunication: a transfer within a device
  // is free); the same for every request when no task has replicas.
  void CountBytes(int req);
  Status StartNext(int dev);
  Status TaskDone(int dev, int req, int task);
  void Enqueue(int dev, int req, int xfer);
  void Pump(int dev);
  // A message handed to d's uplink at `from`: when it arrives (queued
  // behind what the link is still sending, then the latency). `link_free`
  // is that link's queue. On a shared medium it also queues behind what
  // any device holds of the channel, and holds link and channel for the
  // longer of its times on them (runtime/link_shaper.h).
  double Transmit(int d, int64_t bytes, double from, double* link_free);

  const Plan& p_;
  const LatencyModel& m_;
  const SimOptions& o_;
  std::vector<int> map_;  // plan device -> model device
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
  uint64_t order_ = 0;
  double now_ = 0;
  int64_t events_ = 0;
  std::vector<int64_t> bytes_;  // per transfer
  PlanFlow flow_;
  std::vector<double> single_s_;  // per task with one device: its time
  std::unordered_map<int64_t, double> replica_s_;  // task * n + device
  std::vector<DeviceState> dev_;
  std::vector<Request> req_;
  int next_ = 0;
  // Per task: (device, compute ms) of each run, for the per-device medians.
  std::vector<std::vector<std::pair<int, float>>> runs_;
  std::vector<int> one_dev_;  // per task: its device, -1 with replicas
  bool replicas_ = false;
  std::vector<int64_t> sent_once_, received_once_;  // without replicas
  int64_t total_once_ = -1;
  double coord_link_free_ = 0;  // the coordinator's input link (runtime)
  double medium_free_ = 0;      // the shared channel, with one (else 0)
  // Broadcasts (plan/broadcast.h), as the runtime sends them: each hop's
  // chunks, and each chunk forwarded by its hop as it arrives.
  std::vector<Hop> hops_;
  std::vector<Chunk> chunks_;
  // Groups and trees by (request, device, transfers), the request 0 for
  // every one where no task has replicas: then a task's broadcasts are the
  // same for every request, and a tree is made once, not per request and
  // hop. Hops point into `trees_`, whose values never move.
  // (request, task or device, first transfer, transfers): a task's
  // groups are keyed by the task, a tree by its source device and its
  // transfers, which its first and their count name (each transfer is in
  // one group; each device relays once in a group's tree).
  using GroupKey = std::tuple<int64_t, int, int, size_t>;
  struct KeyHash {
    size_t operator()(const GroupKey& k) const {
      uint64_t h = static_cast<uint64_t>(std::get<0>(k));
      for (uint64_t v : {static_cast<uint64_t>(std::get<1>(k)),
                         static_cast<uint64_t>(std::get<2>(k)),
                         static_cast<uint64_t>(std::get<3>(k))}) {
        h = (h ^ v) * 0x100000001b3ULL;  // FNV-1a's prime
      }
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<GroupKey, OutputRoute, KeyHash> routes_;
  // Values of an unordered_map stay where they are on rehash.
  std::unordered_map<GroupKey, std::vector<RelayHop>, KeyHash> trees_;
  std::unordered_map<GroupKey, std::vector<RelayHop>, KeyHash> sources_;
  // The hops by which device `dev` relays `transfers` (RelayHops), or, with
  // `source`, sends a broadcast it holds (SourceHops).
  const std::vector<RelayHop>& TreeOf(int req, int dev,
                                      const std::vector<int>& transfers,
                                      bool source = false);
  // Chunks still to reach each (request, transfer) of a broadcast: it is
  // delivered with its last, which, when the plan scatters, may come
  // through any hop.
  std::unordered_map<int64_t, int64_t> chunks_left_;
  int64_t ChunkKey(int req, int xfer) const {
    return int64_t{req} * int64_t(p_.transfers.size()) + xfer;
  }
  // Where the outputs of `task` (the model input: -1) go from device
  // `self` (plan/dataflow.h RouteOutputs, as the worker and the
  // coordinator send them), made once per task when no task has replicas.
  const OutputRoute& Route(int req, int self, int task);
  // Queues the chunks of `total` bytes for `hops` (new hops of request
  // `req`) on device `from`'s senders, or on the coordinator's link (from
  // < 0), chunk by chunk as the runtime does (runtime/relay_messages.h).
  void SendChunks(int req, int from, const std::vector<RelayHop>& hops,
                  int64_t total);
  // New hops of request `req`, each to be sent `chunks` chunks; `h` (and
  // the RelayHops in `hops`) must outlive them (trees_ and sources_ keep
  // them).
  int OpenHop(int req, const RelayHop& h, int chunks);
  std::vector<int> OpenHops(int req, const std::vector<RelayHop>& hops,
                            int chunks);
  void QueueChunk(int req, int from, int chunk);
  // A chunk reached its hop: the worker's receive CPU, then ChunkArrive.
  void ReceiveChunk(int chunk);
  // The hop has the chunk: it forwards it, and delivers with the last.
  void ChunkArrive(int chunk);
  SimResult res_;
  Status error_;
};

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

double Sim::Transmit(int d, int64_t bytes, double from, double* link_free) {
  const Link& l = m_.LinkOf(map_[d]);
  const Medium& air = m_.cluster().network;
  const double start = std::max({from, *link_free, medium_free_});
  const double tx = l.bandwidth_bps > 0 ? bytes * 8.0 / l.bandwidth_bps : 0;
  if (air.shared) {
    const double held = std::max(tx, air.Airtime(bytes));
    res_.medium_busy_s += held;
    *link_free = medium_free_ = start + held;
  } else {
    *link_free = start + tx;
  }
  return *link_free + l.latency_s;
}

void Sim::StartRequest(int req) {
  Request& r = req_[req];
  r.start = now_;
  r.pending = flow_.incoming;
  r.first.assign(p_.tasks.size(), -1);
  r.out_left = flow_.output_parts;
  // The coordinator sends the input parts for the input device itself first
  // (no link), then each of the others through the input device's link from
  // several threads: their bytes queue on the link, their latencies overlap
  // (runtime/coordinator.cc SendInputs). Then the broadcasts' chunks,
  // through the same link.
  const OutputRoute& route = Route(req, p_.input_device, -1);
  for (const OutputRoute::Direct& dx : route.direct) {
    const int xi = dx.transfer;
    if (dx.to < 0) {  // the input is also the output: nothing to run
      r.out_left--;
      continue;
    }
    const double t = dx.here ? now_
                             : Transmit(p_.input_device, bytes_[xi], now_,
                                        &coord_link_free_);
    Push(t, Kind::kArrive, -1, req, xi);
  }
  for (const auto& g : route.broadcasts) {
    SendChunks(req, -1, TreeOf(req, p_.input_device, g, true),
               bytes_[g.front()]);
  }
  if (r.out_left == 0) Complete(req);
}

const OutputRoute& Sim::Route(int req, int self, int task) {
  const GroupKey key{replicas_ ? Seq(req) : 0, task, 0, 0};
  auto it = routes_.find(key);
  if (it == routes_.end()) {
    const std::vector<int>& out =
        task < 0 ? flow_.inputs : flow_.outgoing[task];
    it = routes_
             .emplace(key, task < 0 ? RouteInput(p_, out, Seq(req))
                                    : RouteOutputs(p_, out, self, Seq(req)))
             .first;
  }
  return it->second;
}

const std::vector<RelayHop>& Sim::TreeOf(int req, int dev,
                                         const std::vector<int>& transfers,
                                         bool source) {
  const GroupKey key{replicas_ ? Seq(req) : 0, dev, transfers.front(),
                     transfers.size()};
  auto& cache = source ? sources_ : trees_;
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache
             .emplace(key, source ? SourceHops(p_, transfers, dev, Seq(req))
                                  : RelayHops(p_, transfers, dev, Seq(req),
                                              p_.broadcast.fanout))
             .first;
  }
  return it->second;
}

int Sim::OpenHop(int req, const RelayHop& h, int chunks) {
  Hop s;
  s.req = req;
  s.device = h.device;
  s.tree = &h;
  s.chunks = chunks;
  hops_.push_back(std::move(s));
  return static_cast<int>(hops_.size()) - 1;
}

std::vector<int> Sim::OpenHops(int req, const std::vector<RelayHop>& hops,
                               int chunks) {
  std::vector<int> ids;
  for (const RelayHop& h : hops) ids.push_back(OpenHop(req, h, chunks));
  return ids;
}

void Sim::SendChunks(int req, int from, const std::vector<RelayHop>& hops,
                     int64_t total) {
  const int64_t cb = p_.broadcast.chunk_bytes;
  const int64_t n = total > 0 ? (total + cb - 1) / cb : 1;
  const int m = static_cast<int>(hops.size());
  // How many chunks each hop is sent: all of them down a tree, its share
  // when the plan scatters.
  std::vector<int> ids;
  for (int k = 0; k < m; ++k) {
    int mine = 0;
    for (int64_t i = 0; i < n; ++i) mine += ChunkGoesTo(p_, i, k, m);
    ids.push_back(OpenHop(req, hops[k], mine));
    for (int xi : hops[k].deliver) chunks_left_[ChunkKey(req, xi)] = n;
    for (int xi : hops[k].relay) chunks_left_[ChunkKey(req, xi)] = n;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = std::max<int64_t>(0, std::min(cb, total - i * cb));
    for (int k = 0; k < m; ++k) {
      if (!ChunkGoesTo(p_, i, k, m)) continue;
      chunks_.push_back(Chunk{ids[k], b});
      QueueChunk(req, from, static_cast<int>(chunks_.size()) - 1);
    }
  }
}

void Sim::QueueChunk(int req, int from, int c) {
  if (from < 0) {  // the coordinator: the input device's link, many threads
    const double t =
        Transmit(p_.input_device, chunks_[c].bytes, now_, &coord_link_free_);
    Push(t, Kind::kChunkArrive, -1, req, c);
    return;
  }
  dev_[from].out.push_back(
      Msg{req, hops_[chunks_[c].hop].tree->deliver.front(), now_, c});
  Pump(from);
}

void Sim::ReceiveChunk(int c) {
  const int dev = hops_[chunks_[c].hop].device;
  const double cpu = m_.RecvCpuSeconds(map_[dev], chunks_[c].bytes);
  Push(CpuDone(dev, now_, cpu), Kind::kChunkReceived, dev,
       hops_[chunks_[c].hop].req, c);
}

void Sim::ChunkArrive(int c) {
  const int id = chunks_[c].hop;
  const int64_t bytes = chunks_[c].bytes;
  const int req = hops_[id].req;
  const int dev = hops_[id].device;
  // Each chunk is forwarded as it arrives, to the hops below this one.
  if (!hops_[id].tree->relay.empty() && hops_[id].arrived == 0) {
    hops_[id].below = OpenHops(req, TreeOf(req, dev, hops_[id].tree->relay),
                               hops_[id].chunks);
  }
  for (size_t k = 0; k < hops_[id].below.size(); ++k) {
    chunks_.push_back(Chunk{hops_[id].below[k], bytes});
    QueueChunk(req, dev, static_cast<int>(chunks_.size()) - 1);
  }
  ++hops_[id].arrived;
  for (int xi : hops_[id].tree->deliver) {  // its CPU already spent
    auto left = chunks_left_.find(ChunkKey(req, xi));
    if (left == chunks_left_.end() || --left->second > 0) continue;
    chunks_left_.erase(left);
    Arrive(req, xi);
  }
}

double Sim::CpuDone(int d, double from, double cpu_s) {
  if (cpu_s <= 0) return from;
  const CpuQuota q = m_.Quota(map_[d]);
  if (o_.cpu_quota && q.limited()) return dev_[d].clock.Run(from, cpu_s);
  return from + cpu_s;
}

void Sim::Receive(int req, int xfer) {
  const Transfer& x = p_.transfers[xfer];
  if (x.dst.task == kModelOutput) return Arrive(req, xfer);
  const int d = Dev(x.dst.task, Seq(req));
  const double c = m_.RecvCpuSeconds(map_[d], bytes_[xfer]);
  if (c <= 0) return Arrive(req, xfer);
  Push(CpuDone(d, now_, c), Kind::kReceived, d, req, xfer);
}

void Sim::Arrive(int req, int xfer) {
  Request& r = req_[req];
  const Transfer& x = p_.transfers[xfer];
  if (x.dst.task == kModelOutput) {
    if (--r.out_left == 0) Complete(req);
    return;
  }
  const int task = x.dst.task;
  if (r.first[task] < 0) r.first[task] = now_;
  if (--r.pending[task] > 0) return;
  const int d = Dev(task, Seq(req));
  DeviceState& ds = dev_[d];
  ds.r.wait_ms_total += (now_ - r.first[task]) * 1e3;
  ds.ready.Push(Ready{Seq(req), task, now_});
  ds.r.queue_histogram[std::min<size_t>(ds.ready.size(),
                                        kQueueHistogramBins - 1)]++;
  if (!ds.busy) {
    Status s = StartNext(d);
    if (!s.ok() && error_.ok()) error_ = s;
  }
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

void Sim::CountBytes(int req) {
  const size_t nd = dev_.size();
  if (!replicas_ && total_once_ >= 0) {
    res_.bytes_total += total_once_;
    for (size_t d = 0; d < nd; ++d) {
      dev_[d].r.bytes_sent += sent_once_[d];
      dev_[d].r.bytes_received += received_once_[d];
    }
    return;
  }
  std::vector<int64_t> sent(nd, 0), received(nd, 0);
  int64_t total = 0;
  for (const WireHop& h : WireHops(p_, Seq(req))) {
    const int64_t b = ChunkShareBytes(
        bytes_[h.transfer], p_.broadcast.chunk_bytes, h.part, h.parts);
    sent[h.from] += b;
    received[h.to] += b;
    total += b;
  }
  if (!replicas_) {
    sent_once_ = sent;
    received_once_ = received;
    total_once_ = total;
    CountBytes(req);
    return;
  }
  res_.bytes_total += total;
  for (size_t d = 0; d < nd; ++d) {
    dev_[d].r.bytes_sent += sent[d];
    dev_[d].r.bytes_received += received[d];
  }
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
  ds.busy = true;
  ds.busy_since = now_;
  ds.ready_since = rd.at;
  Push(end, Kind::kTaskDone, d, int(rd.seq - 1), rd.task);
  return Status::Ok();
}

void Sim::Enqueue(int d, int req, int xfer) {
  dev_[d].out.push_back(Msg{req, xfer, now_});
  Pump(d);
}

void Sim::Pump(int d) {
  DeviceState& ds = dev_[d];
  while (ds.free_senders > 0 && !ds.out.empty()) {
    const Msg m = ds.out.front();
    ds.out.pop_front();
    ds.free_senders--;
    const Transfer& x = p_.transfers[m.xfer];
    const bool chunk = m.chunk >= 0;
    const int64_t bytes = chunk ? chunks_[m.chunk].bytes : bytes_[m.xfer];
    const int to = chunk ? hops_[chunks_[m.chunk].hop].device
                   : x.dst.task == kModelOutput ? p_.output_device
                                                : Dev(x.dst.task, Seq(m.req));
    // As the worker's sender does: the emulated link first (its shaper
    // sleeps the bytes' time behind what the link still carries, then the
    // latency: runtime/link_shaper.h), then gRPC's send CPU, so a device
    // under a quota often sends on a fresh period's quota where the other
    // order made it wait for one (`shoal bench --trace`: a Pi 3 of mixed
    // handed its next stage 144 KiB 12 ms after its task, where the
    // simulator had predicted 34). The output device sends its part of the
    // model output to the coordinator over no link but with the same CPU.
    // The planner's PredictPlan (planner/predict.cc SendCpu, RecvCpu)
    // charges the same ends.
    const double linked =
        to != d ? Transmit(d, bytes, now_, &ds.link_free) : now_;
    const double done = CpuDone(d, linked, m_.SendCpuSeconds(map_[d], bytes));
    if (chunk) {
      Push(done, Kind::kChunkSent, d, m.req, m.chunk);
    } else {
      Push(done, Kind::kSendDone, d, m.req, m.xfer);
    }
    if (o_.trace) {
      res_.spans.push_back({TraceSpan::Kind::kSend, d, Seq(m.req), m.xfer,
                            m.queued, now_, done});
    }
  }
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
