// What a worker tells of itself: its statistics and timeline (Stats), the
// layers and links `shoal profile` measures, and its Prometheus page.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "cluster/board.h"
#include "graph/cost.h"
#include "metrics/exposition.h"
#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "plan/graph_json.h"
#include "plan/json_parse.h"
#include "plan/plan_cost.h"
#include "plan/trace.h"
#include "runtime/chunk_assembler.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/link_shaper.h"
#include "runtime/process_setup.h"
#include "runtime/profiling.h"
#include "runtime/rpc_guard.h"
#include "runtime/task_scheduler.h"
#include "runtime/wire.h"
#include "runtime/worker_core.h"
#include "runtime/worker_impl.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"
#include "util/clock.h"
#include "util/units.h"

namespace shoal {

grpc::Status Worker::Impl::Stats(grpc::ServerContext* ctx,
                                 const rpc::StatsRequest* req,
                                 rpc::StatsReply* rep) {
  const HandlerScope in_flight(this);
  return GuardRpc(Who(), "Stats", [&]() -> grpc::Status {
    if (auto s = FromCoordinator(ctx, "Stats"); !s.ok()) return s;
    if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
    if (req->timeline()) {
      // A request's answer reaches its caller before the sender here has
      // its acknowledgement and records the span: wait for those (briefly;
      // a message stuck on a slow peer is left out).
      sender.WaitUntilSent(Clock::now() + std::chrono::seconds(1));
    }
    const auto dep = deployments.current();
    rep->set_name(opts.name);
    stats.With([&](WorkerStats& s) {
      s.Report(dep ? &dep->plan : nullptr, req->timeline(), rep);
      if (req->reset()) s.Reset();
    });
    rep->set_now_ns(SteadyNs(Clock::now()));
    return grpc::Status::OK;
  });
}

grpc::Status Worker::Impl::Profile(grpc::ServerContext* ctx,
                                   const rpc::ProfileRequest* req,
                                   rpc::ProfileReply* rep) {
  const HandlerScope in_flight(this);
  const grpc::Status st = GuardRpc(Who(), "Profile", [&]() -> grpc::Status {
    if (auto s = FromCoordinator(ctx, "Profile"); !s.ok()) return s;
    if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
    StatusOr<Graph> g = InvalidArgument("graph is not JSON");
    if (auto j = ParseJson(req->graph_json(), "graph"); j.ok()) {
      try {
        g = GraphFromJson(*j);
      } catch (const std::exception& e) {
        g = InvalidArgument(std::string("graph: ") + e.what());
      }
    } else {
      g = j.status();
    }
    if (!g.ok()) return ToGrpc(g.status().WithContext(Who()));
    // The graph's weights (random, made here) and activations count
    // against the budget like a deployment's, its largest weight twice
    // while the engine reorders it: a caller could otherwise name a graph
    // of any size.
    int64_t weights = 0, largest = 0;
    for (const auto& [name, t] : g->tensors) {
      if (!t.is_weight()) continue;
      const int64_t bytes = NumElements(t.shape) * kBytesPerElement;
      weights += bytes;
      largest = std::max(largest, bytes);
    }
    const int64_t need =
        DeviceWeightMemory(weights, largest) + PeakActivationBytes(*g);
    const int64_t budget = opts.memory_bytes;
    if (budget > 0 && need > budget) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          Who() + " refuses to profile a graph that needs " + MiB(need) + " (" +
              MiB(weights) + " of weights + " + MiB(largest) +
              " while its largest weight is reordered + activations); its "
              "memory budget is " +
              MiB(budget));
    }
    // And beside what the worker holds: its deployments, which stay, and
    // the graphs profiled at the same time. After a deployment being built
    // (deploy_mu), which then counts this graph in turn.
    {
      std::lock_guard<std::mutex> deploying(deploy_mu);
      std::lock_guard<std::mutex> lock(profiling_mu);
      const int64_t held = deployments.Bytes() + profiling_bytes;
      if (budget > 0 && need + held > budget) {
        return grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            Who() + " refuses to profile a graph that needs " + MiB(need) +
                " beside the " + MiB(held) +
                " it holds (its deployments, graphs being profiled); its "
                "memory budget is " +
                MiB(budget) +
                ": profile it where no plan is deployed (a restarted "
                "worker)");
      }
      profiling_bytes += need;
    }
    struct Unreserve {
      Impl* impl;
      int64_t bytes;
      ~Unreserve() {
        std::lock_guard<std::mutex> lock(impl->profiling_mu);
        impl->profiling_bytes -= bytes;
      }
    } unreserve{this, need};
    TimingOptions o;
    o.seed = req->seed();
    o.min_runs = std::max(1, req->min_runs());
    o.min_seconds = std::max(0.0, req->min_seconds());
    o.max_seconds = req->max_seconds() > 0 ? req->max_seconds() : 10.0;
    o.threads = opts.threads;
    o.backend = opts.backend;
    o.cpu_fraction = opts.cpu_fraction;
    o.per_node = req->per_node();
    // An emulated board takes its class's time for the graph, as for a
    // task (deployment.cc): timing the host's run instead profiled boards
    // at the host's speed.
    std::vector<NodeTime> board_nodes;
    if (opts.board != nullptr) {
      const BoardRates rates = ScaleRates(opts.board->rates, opts.board_speed);
      double s = 0;
      for (const auto& n : g->nodes) {
        auto c = ComputeNodeCost(*g, n);
        if (!c.ok()) {
          return ToGrpc(c.status().WithContext(Who() + " profiling"));
        }
        board_nodes.push_back({n.name, BoardNodeSeconds(rates, *c)});
        s += board_nodes.back().seconds;
      }
      o.hold_seconds = s * opts.dilation;
      o.dilation = opts.dilation;
    }
    auto t = TimeGraph(*g, o);
    if (!t.ok()) return ToGrpc(t.status().WithContext(Who() + " profiling"));
    // A board's steps take the class's time each, whatever the host did.
    if (opts.board != nullptr && o.per_node) t->node_seconds = board_nodes;
    const CpuQuota q = OwnCpuQuota();
    rep->set_runs(t->runs);
    rep->set_seconds_mean(t->seconds_mean);
    rep->set_seconds_median(t->seconds_median);
    rep->set_seconds_min(t->seconds_min);
    rep->set_cpu_seconds_mean(t->cpu_seconds_mean);
    rep->set_cpu_seconds_median(t->cpu_seconds_median);
    rep->set_cpu_quota_s(q.quota_s);
    rep->set_cpu_period_s(q.period_s);
    rep->set_cpu_fraction(opts.cpu_fraction);
    rep->set_threads(opts.threads);
    for (const auto& n : t->node_seconds) {
      rpc::NodeSeconds* r = rep->add_nodes();
      r->set_node(n.node);
      r->set_seconds(n.seconds);
    }
    return grpc::Status::OK;
  });
  // The graph, its weights and its engine are freed: a profile times one
  // after another, as large as the whole model (VGG16 on a 1 GiB Pi 3 was
  // killed by its memory limit in the third round without this).
  TrimFreedMemory();
  return st;
}

grpc::Status Worker::Impl::ProbeLink(grpc::ServerContext* ctx,
                                     const rpc::LinkProbeRequest* req,
                                     rpc::LinkProbeReply* rep) {
  const HandlerScope in_flight(this);
  return GuardRpc(Who(), "ProbeLink", [&]() -> grpc::Status {
    if (auto s = FromCoordinator(ctx, "ProbeLink"); !s.ok()) return s;
    if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
    if (req->bytes() < 0 || req->bytes() > max_msg || req->count() < 1 ||
        req->count() > 100 || req->timeout_ms() <= 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          Who() + ": link probe out of range");
    }
    // One probe message is held (and gRPC copies it once more while it
    // sends): at most a quarter of the budget.
    if (opts.memory_bytes > 0 && req->bytes() > opts.memory_bytes / 4) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          Who() + " refuses a link probe of " +
                              MiB(req->bytes()) +
                              " a message: a quarter of its memory budget (" +
                              MiB(opts.memory_bytes / 4) + ") at most");
    }
    rpc::SinkMessage m;
    m.set_protocol(kProtocolVersion);
    m.mutable_data()->assign(req->bytes(), '\x5a');
    // With TLS the target must prove it is a member of the cluster (of
    // the role asked for) before a byte of the probe goes to it.
    auto stub = rpc::Worker::NewStub(
        Dial(req->target(), req->target_coordinator() ? TlsRole::kCoordinator
                                                      : TlsRole::kDevice));
    const double cpu0 = CpuSeconds(true);
    for (int i = 0; i < req->count(); ++i) {
      const auto t0 = Clock::now();
      shaper.Transmit(req->bytes());
      grpc::ClientContext ctx;
      ctx.set_deadline(DeadlineIn(req->timeout_ms()));
      rpc::Ack ack;
      grpc::Status s = stub->Sink(&ctx, m, &ack);
      if (!s.ok()) {
        return grpc::Status(s.error_code(), Who() + " cannot reach " +
                                                req->target() + ": " +
                                                s.error_message());
      }
      // In board time, as the coordinator reports requests: a dilated
      // worker's link is K times slower in host time, and so is the
      // board it stands for (profiles of dilated clusters priced every
      // message K times too dear: lop's 325 ms predicted as 563).
      rep->add_seconds(MsSince(t0) / 1e3 / opts.dilation);
    }
    rep->set_cpu_seconds((CpuSeconds(true) - cpu0) / opts.dilation);
    return grpc::Status::OK;
  });
}

HttpReply Worker::Impl::MetricsPage() {
  WorkerGauges g;
  g.send_queue = sender.unsent();
  g.memory_budget_bytes = opts.memory_bytes;
  g.tls_handshake_failures = FailedTlsHandshakes();
  scheduler.AddGauges(&g);
  deployments.AddBytes(&g);
  HttpReply r;
  r.content_type = kExpositionContentType;
  r.body = metrics.Scrape(g);
  return r;
}

}  // namespace shoal
