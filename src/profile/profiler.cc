#include "profile/profiler.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "plan/graph_json.h"
#include "profile/path_cpu.h"
#include "profile/worker_health.h"
#include "runtime/peer_auth.h"
#include "runtime/wire.h"
#include "sim/fit.h"
#include "util/net_address.h"
#include "util/parallel_for.h"
#include "util/stats.h"
#include "util/units.h"

namespace shoal {

namespace {

// Devices profiled at once, at most: a cluster of any size gets this many
// threads, each taking the next device when it is done.
constexpr size_t kProfileThreads = 32;

std::string Who(const DeviceSpec& d) {
  return "device " + d.name + " (" + d.address + ")";
}

Status CheckDevice(const DeviceSpec& d, rpc::Worker::Stub* stub) {
  ASSIGN_OR_RETURN(const rpc::HealthReply rep, WorkerHealth(d, stub));
  if (rep.protocol() != kProtocolVersion) {
    return FailedPrecondition(Who(d) + " speaks shoal protocol version " +
                              std::to_string(rep.protocol()) +
                              " but this shoal speaks " +
                              std::to_string(kProtocolVersion));
  }
  return Status::Ok();
}

// One Profile RPC: `graph_json` built and timed on the device's worker.
StatusOr<rpc::ProfileReply> TimeOnWorker(const DeviceSpec& d,
                                         rpc::Worker::Stub* stub,
                                         const std::string& graph_json,
                                         uint64_t seed, bool per_node,
                                         const ProfilerOptions& o,
                                         const std::string& what) {
  rpc::ProfileRequest req;
  req.set_protocol(kProtocolVersion);
  req.set_graph_json(graph_json);
  req.set_seed(seed);
  req.set_min_runs(o.repeat);
  req.set_min_seconds(o.min_seconds);
  req.set_max_seconds(o.max_seconds);
  req.set_per_node(per_node);
  rpc::ProfileReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(o.rpc_timeout_ms));
  grpc::Status s = stub->Profile(&ctx, req, &rep);
  if (s.ok()) return rep;
  const std::string msg = Who(d) + " could not time " + what;
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return FromGrpc(s, msg +
                           ": its worker predates profiling; restart it "
                           "with this shoal");
  }
  return FromGrpc(s, msg);
}

// Medians: a variant runs a few times only (--repeat, --min-seconds), and
// one run slowed by the host, or throttled mid-way and back to a cold
// cache, should not move its time.
double RunMedian(double median, double mean) {
  return median > 0 ? median : mean;
}

Status ProfileLayers(const DeviceSpec& d, rpc::Worker::Stub* stub,
                     const std::vector<LayerVariant>& variants,
                     const ProfilerOptions& o, DeviceProfile* out) {
  // Rounds: every variant once, then the whole model, then again. A
  // variant's time moves by 10-40 % from one measurement to the next on a
  // shared host however long each one lasts (a quota-throttled device's
  // cache is the host's), so it is the median of `rounds` measurements
  // a whole round apart (a minute for AlexNet on an emulated Pi 3), each
  // on a freshly built engine.
  const int rounds = std::max(1, o.rounds);
  const int steps = ProfileStepsPerDevice(variants.size(), o);
  std::vector<std::string> fragments;
  for (const auto& v : variants) {
    fragments.push_back(GraphToJson(v.fragment).dump());
  }
  const std::string whole = o.graph ? GraphToJson(*o.graph).dump() : "";
  std::vector<std::vector<double>> secs(variants.size()), cpus(variants.size());
  std::map<std::string, std::vector<double>> node_secs;
  std::vector<double> model_secs, model_cpus;
  int done = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < variants.size(); ++i) {
      const LayerVariant& v = variants[i];
      ASSIGN_OR_RETURN(
          rpc::ProfileReply rep,
          TimeOnWorker(d, stub, fragments[i], o.seed + i, false, o,
                       "layer " + v.layer + " (" + v.variant + ")"));
      secs[i].push_back(RunMedian(rep.seconds_median(), rep.seconds_mean()));
      cpus[i].push_back(
          RunMedian(rep.cpu_seconds_median(), rep.cpu_seconds_mean()));
      out->has_cpu_quota = true;
      out->cpu_quota.quota_s = rep.cpu_quota_s();
      out->cpu_quota.period_s = rep.cpu_period_s();
      out->cpu_pace = rep.cpu_fraction();
      if (o.progress) {
        o.progress(
            {d.name, ++done, steps, v.layer + " " + v.variant, secs[i].back()});
      }
    }
    if (o.graph == nullptr) continue;
    // Layers in a stage run in the blocked layout one after another,
    // without the reorders a one-node graph pays at both ends: time them
    // in the model, step by step.
    ASSIGN_OR_RETURN(
        rpc::ProfileReply rep,
        TimeOnWorker(d, stub, whole, o.seed, true, o, "the whole model"));
    if (rep.nodes_size() == 0) {
      return FailedPrecondition(Who(d) +
                                " timed no node of the whole model: its "
                                "worker predates per-node profiling; "
                                "restart it");
    }
    for (const auto& n : rep.nodes())
      node_secs[n.node()].push_back(n.seconds());
    model_secs.push_back(rep.seconds_mean());
    model_cpus.push_back(rep.cpu_seconds_mean());
    if (o.progress) {
      o.progress({d.name, ++done, steps, "whole model", model_secs.back()});
    }
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    const LayerVariant& v = variants[i];
    LayerSample ls;
    ls.model = o.model;
    ls.layer = v.layer;
    ls.variant = v.variant;
    ls.op = v.cost.op;
    ls.macs = v.cost.macs;
    ls.bytes =
        v.cost.input_bytes() + v.cost.output_bytes() + v.cost.weight_bytes();
    ls.seconds = Median(secs[i]);
    ls.cpu_seconds = Median(cpus[i]);
    out->samples.push_back(ls);
  }
  if (o.graph == nullptr) return Status::Ok();
  std::map<std::string, double> in_model;
  for (const auto& [node, s] : node_secs) in_model[node] = Median(s);
  ApplyInModelTimes(in_model, Median(model_secs), Median(model_cpus),
                    &out->samples);
  return Status::Ok();
}

// A device whose worker runs under a cgroup CPU quota below one core.
bool Throttled(const DeviceProfile& d) {
  return d.has_cpu_quota && d.cpu_quota.fraction() < 1;
}

struct ProbeResult {
  std::vector<double> seconds;
  double sender_cpu_s = 0;  // over all the sends
};

// `target_coordinator`: the target is this process's sink, not a device.
StatusOr<ProbeResult> Probe(const DeviceSpec& d, rpc::Worker::Stub* stub,
                            const std::string& target, int64_t bytes, int count,
                            const ProfilerOptions& o, bool target_coordinator) {
  rpc::LinkProbeRequest req;
  req.set_protocol(kProtocolVersion);
  req.set_target(target);
  req.set_target_coordinator(target_coordinator);
  req.set_bytes(bytes);
  req.set_count(count);
  req.set_timeout_ms(o.rpc_timeout_ms);
  rpc::LinkProbeReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(o.rpc_timeout_ms));
  grpc::Status s = stub->ProbeLink(&ctx, req, &rep);
  if (!s.ok()) {
    return FromGrpc(
        s, Who(d) + " could not send " + HumanBytes(bytes) + " to " + target);
  }
  return ProbeResult{{rep.seconds().begin(), rep.seconds().end()},
                     rep.cpu_seconds()};
}

// CPU per 64 B message on the sender and on the receiver (a worker, or
// none): a probe of `count` messages less a probe of one, over count - 1,
// so that each probe's new connection cancels out; the median of `rounds`
// such pairs.
struct MessageCpu {
  double send_s = 0, recv_s = 0;
};
StatusOr<MessageCpu> MeasureMessageCpu(const DeviceSpec& d,
                                       rpc::Worker::Stub* stub,
                                       const DeviceSpec* peer,
                                       rpc::Worker::Stub* peer_stub,
                                       const std::string& target, int count,
                                       int rounds, const ProfilerOptions& o) {
  std::vector<double> send, recv;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    double cpu[2] = {0, 0}, got[2] = {0, 0};
    const int counts[2] = {1, count};
    for (int k = 0; k < 2; ++k) {
      double r0 = 0;
      if (peer != nullptr) {
        ASSIGN_OR_RETURN(r0, WorkerProcessCpu(*peer, peer_stub));
      }
      ASSIGN_OR_RETURN(ProbeResult p,
                       Probe(d, stub, target, 64, counts[k], o,
                             /*target_coordinator=*/peer == nullptr));
      cpu[k] = p.sender_cpu_s;
      if (peer != nullptr) {
        ASSIGN_OR_RETURN(double r1, WorkerProcessCpu(*peer, peer_stub));
        got[k] = r1 - r0;
      }
    }
    send.push_back(std::max(0.0, (cpu[1] - cpu[0]) / (count - 1)));
    recv.push_back(std::max(0.0, (got[1] - got[0]) / (count - 1)));
  }
  return MessageCpu{Median(send), Median(recv)};
}

// Receives the probes of a one-device cluster (it has no peer).
struct SinkService final : public rpc::Worker::Service {
  const TlsIdentity* tls = nullptr;
  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override {
    if (auto s = RequireMember(*ctx, tls, "the profiler", "Sink"); !s.ok()) {
      return s;
    }
    return CheckProtocol(m->protocol(), "the profiler");
  }
};

}  // namespace

Link LinkFromProbes(const std::vector<double>& small,
                    const std::vector<double>& large, int64_t large_bytes,
                    double message_cpu_s, bool throttled) {
  // Under a CPU quota below a core at either end, the probe's messages
  // also wait for quota: of 31 from a Pi 3 of mixed.yaml (1 ms per 23 ms)
  // on its 9 ms link, about half took 9.7-10 ms and the rest 12-14 ms or a
  // whole period more, and idling a period or two before each message did
  // not change that. Their median moved between 9.0 and 20.7 ms from one
  // profile to the next, and the simulator, which adds the quota's waits
  // itself where the runtime meets them (QuotaClock), predicted AlexNet's
  // lip plan on mixed.yaml at 488 ms from 20.7 (395 from 9.4; it benched at
  // 375-395). So there the link is the probes' lower quartile; elsewhere
  // their median (docs/simulator.md, "Links").
  const double q = throttled ? 0.25 : 0.5;
  const double ts = Quantile(small, q), tl = Quantile(large, q);
  Link l;
  // Two points of latency + bytes / bandwidth.
  l.bandwidth_bps = tl > ts ? 8.0 * double(large_bytes - 64) / (tl - ts) : 0.0;
  // The probe paid both ends' CPU, at full speed on idle devices; the
  // simulator charges that to the devices' CPU instead.
  l.latency_s =
      std::max(0.0, ts - (l.bandwidth_bps > 0 ? 512 / l.bandwidth_bps : 0) -
                        message_cpu_s);
  return l;
}

int ProfileStepsPerDevice(size_t variants, const ProfilerOptions& o) {
  const int per_round = static_cast<int>(variants) + (o.graph ? 1 : 0);
  return std::max(1, o.rounds) * per_round + 1;  // + the link
}

StatusOr<Profile> ProfileCluster(const Cluster& c,
                                 const std::vector<LayerVariant>& variants,
                                 const ProfilerOptions& opts) {
  ProfilerOptions o = opts;
  if (!o.tls && c.tls.any()) {
    ASSIGN_OR_RETURN(o.tls, LoadTlsIdentity(c.tls));
  }
  const size_t n = c.devices.size();
  if (n == 0) return InvalidArgument("the cluster has no devices");
  std::vector<std::unique_ptr<rpc::Worker::Stub>> stubs;
  for (const auto& d : c.devices) {
    if (d.address.empty()) {
      return InvalidArgument("cluster device " + d.name + " has no address");
    }
    stubs.push_back(rpc::Worker::NewStub(
        MakeChannel(d.address, kDefaultMaxMessageBytes, o.tls.get())));
  }
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(CheckDevice(c.devices[i], stubs[i].get()));
  }
  Profile p;
  p.devices.resize(n);
  std::vector<Status> st(n);
  for (size_t i = 0; i < n; ++i) p.devices[i].name = c.devices[i].name;
  ParallelFor(n, kProfileThreads, [&](size_t i) {
    st[i] =
        ProfileLayers(c.devices[i], stubs[i].get(), variants, o, &p.devices[i]);
  });
  for (const auto& s : st) RETURN_IF_ERROR(s);

  SinkService sink;
  sink.tls = o.tls.get();
  std::unique_ptr<grpc::Server> server;
  std::string sink_addr;
  if (n == 1) {
    // A lone device probes its link to this process.
    ASSIGN_OR_RETURN(ReplyEndpoint ep,
                     ChooseReplyEndpoint(o.advertise, c.devices[0].address,
                                         c.devices[0].name));
    grpc::ServerBuilder b;
    int port = 0;
    const std::string listen = JoinHostPort(ep.listen_host, ep.port);
    b.AddListeningPort(listen, ServerCredentialsFor(o.tls.get()), &port);
    ConfigureServer(&b, kDefaultMaxMessageBytes);
    b.RegisterService(&sink);
    server = b.BuildAndStart();
    if (!server || port == 0) {
      return Unavailable("the profiler cannot listen on " + listen);
    }
    sink_addr = JoinHostPort(ep.advertise_host, port);
  }
  for (size_t i = 0; i < n; ++i) {
    const DeviceSpec& d = c.devices[i];
    const std::string target =
        n == 1 ? sink_addr : c.devices[(i + 1) % n].address;
    ASSIGN_OR_RETURN(auto small, Probe(d, stubs[i].get(), target, 64,
                                       o.small_probes, o, n == 1));
    ASSIGN_OR_RETURN(auto large, Probe(d, stubs[i].get(), target, o.large_bytes,
                                       o.large_probes, o, n == 1));
    const size_t peer = (i + 1) % n;
    MessageCpu mc;
    if (o.message_probes >= 2) {
      ASSIGN_OR_RETURN(
          mc, MeasureMessageCpu(d, stubs[i].get(),
                                n == 1 ? nullptr : &c.devices[peer],
                                n == 1 ? nullptr : stubs[peer].get(), target,
                                o.message_probes, o.message_rounds, o));
    }
    p.devices[i].send_cpu_s = mc.send_s;
    if (n > 1) p.devices[peer].recv_cpu_s = mc.recv_s;
    p.devices[i].link = LinkFromProbes(
        small.seconds, large.seconds, o.large_bytes,
        mc.send_s + (n > 1 ? mc.recv_s : 0),
        Throttled(p.devices[i]) || (n > 1 && Throttled(p.devices[peer])));
    if (o.progress) {
      const int steps = ProfileStepsPerDevice(variants.size(), o);
      o.progress({d.name, steps, steps, "link", Median(large.seconds)});
    }
  }
  if (server) server->Shutdown(DeadlineIn(200));
  // Per byte, on the runtime's own path, one device at a time (each
  // reads its own CPU, which another device's traffic would not touch, but
  // the host's cores are shared).
  for (size_t i = 0; o.path_cpu && i < n; ++i) {
    PathCpuOptions po;
    po.timeout_ms = o.rpc_timeout_ms;
    po.advertise = o.advertise;
    po.tls = o.tls;
    ASSIGN_OR_RETURN(PathCpu pc, MeasurePathCpu(c.devices[i], po));
    p.devices[i].recv_cpu_per_byte_s = pc.recv_per_byte_s;
    p.devices[i].send_cpu_per_byte_s = pc.send_per_byte_s;
    p.devices[i].idle_cpu_per_s = pc.idle_cpu_per_s;
    if (o.progress) {
      const int steps = ProfileStepsPerDevice(variants.size(), o);
      o.progress({c.devices[i].name, steps, steps, "message CPU per byte",
                  pc.recv_per_byte_s});
    }
  }
  for (auto& d : p.devices) RefitDevice(&d);
  return p;
}

}  // namespace shoal
