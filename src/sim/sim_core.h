// The discrete-event simulation behind Simulate (sim/simulator.h): its
// events, the state of each device and request, and the Sim that runs
// them. Internal to sim/: the transfers' side (links, broadcasts' chunks,
// senders) is in sim_transfers.cc, the rest in simulator.cc.
#ifndef SHOAL_SIM_SIM_CORE_H_
#define SHOAL_SIM_SIM_CORE_H_

#include <cstdint>
#include <deque>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/cpu_quota.h"
#include "plan/broadcast.h"
#include "plan/dataflow.h"
#include "sim/simulator.h"

namespace shoal {
namespace sim_core {

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
  // Per task and device, the seconds it pages back in per run on a board
  // that swaps (cluster/swap.h); empty when nothing swaps.
  void IndexSwap();
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
  std::vector<int> one_dev_;    // per task: its device, -1 with replicas
  std::vector<double> swap_s_;  // task * devices + device; empty: no swap
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

}  // namespace sim_core
}  // namespace shoal

#endif  // SHOAL_SIM_SIM_CORE_H_
