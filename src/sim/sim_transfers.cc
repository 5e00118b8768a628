// The simulation's transfers: links and a shared medium, each device's
// senders, broadcasts sent chunk by chunk along their relay trees, and the
// bytes each request moves (sim/sim_core.h).
#include <algorithm>

#include "sim/sim_core.h"

namespace shoal {
namespace sim_core {

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

}  // namespace sim_core
}  // namespace shoal
