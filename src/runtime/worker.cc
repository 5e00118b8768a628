#include "runtime/worker.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "graph/cost.h"
#include "metrics/exposition.h"
#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "plan/broadcast.h"
#include "plan/graph_json.h"
#include "plan/json_parse.h"
#include "plan/plan_cost.h"
#include "plan/trace.h"
#include "runtime/blob_cache.h"
#include "runtime/blob_upload.h"
#include "runtime/chunk_assembler.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/process_setup.h"
#include "runtime/profiling.h"
#include "runtime/relay_messages.h"
#include "runtime/rpc_guard.h"
#include "runtime/task_scheduler.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "runtime/worker_core.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"
#include "util/clock.h"
#include "util/units.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMaxTimeoutMs = 3600 * 1000;

}  // namespace

// The gRPC service of a worker: it checks each call's caller, protocol and
// arguments and hands the work to the parts that do it: the blob cache
// (weights), the deployment slots (plans held), the scheduler (mailboxes,
// ready tasks, compute) and the sender (messages out), which count into
// the statistics (timeline).
struct Worker::Impl final : public rpc::Worker::Service {
  WorkerOptions opts;
  WorkerMetrics metrics;
  int64_t max_msg = kDefaultMaxMessageBytes;
  LinkShaper shaper{Link{}};
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  Clock::time_point started = Clock::now();

  std::unique_ptr<BlobCache> cache;  // set by Start; has its own lock
  LockedWorkerStats stats;           // since the last reset
  DeploymentSlots deployments;
  ChunkAssembler chunks;  // transfers arriving in chunks; its own lock
  WorkerSender sender;
  TaskScheduler scheduler;  // after the sender, which it queues to
  std::mutex deploy_mu;     // one deployment at a time
  std::atomic<bool> stopped{false};

  // RPC handlers running now; Stop waits until none is. gRPC's Shutdown
  // waits for its handler threads too, but through abseil's
  // synchronisation, which ThreadSanitizer cannot see, and a direct call
  // (Worker::PutBlobs, the in-process transport) has no server to wait for.
  std::mutex handlers_mu;
  std::condition_variable handlers_cv;
  int handlers = 0;
  Clock::time_point last_handler_end = Clock::now();
  struct HandlerScope {
    explicit HandlerScope(Impl* p) : impl(p) {
      std::lock_guard<std::mutex> lock(impl->handlers_mu);
      ++impl->handlers;
    }
    ~HandlerScope() {
      std::lock_guard<std::mutex> lock(impl->handlers_mu);
      impl->last_handler_end = Clock::now();
      if (--impl->handlers == 0) impl->handlers_cv.notify_all();
    }
    HandlerScope(const HandlerScope&) = delete;
    HandlerScope& operator=(const HandlerScope&) = delete;
    Impl* impl;
  };

  // Hands memory freed by gRPC back to the system once the worker is
  // quiet (Worker::Start only: the server's connections are what a peer
  // can grow). Without it, what a flood of connections made gRPC buffer
  // stayed resident after they closed (934 MB of a 1 GiB budget 10 s after
  // the peer left): glibc keeps freed blocks in its heaps.
  std::thread trimmer;
  std::condition_variable trimmer_cv;  // with handlers_mu

  // Last, so destroyed first: its page reads the members above.
  std::unique_ptr<HttpServer> metrics_http;

  explicit Impl(const WorkerOptions& o)
      : opts(o),
        shaper(o.link, o.medium),
        sender(Core(), &shaper,
               [this](const std::string& addr) {
                 return Dial(addr, TlsRole::kCoordinator);
               }),
        scheduler(Core(), &sender) {
    if (o.max_message_bytes > 0) max_msg = o.max_message_bytes;
    // A message's declared size is checked when its first bytes arrive:
    // one over an eighth of the budget is refused then, before gRPC
    // buffers any of it; so two fit in the quota (ServerQuota) at once.
    if (o.memory_bytes > 0) {
      max_msg =
          std::min(max_msg, std::max(o.memory_bytes / 8, kMinMaxMessageBytes));
    }
  }

  // A plan's Deploy and a layer's tensor must get through even on a
  // budget of a few megabytes (the budget is for the model).
  static constexpr int64_t kMinMaxMessageBytes = int64_t{4} << 20;

  // What gRPC may buffer for the server's connections, whoever sends:
  // under the quota (a quarter of the budget) gRPC reads no further,
  // closes idle connections and then cancels the calls holding the most,
  // so a peer with many connections and half-sent messages cannot grow the
  // worker past its budget (runtime/worker_flood_slowtest.cc). 0: no
  // budget, no quota.
  int64_t ServerQuota() const {
    if (opts.memory_bytes <= 0) return 0;
    return std::max(opts.memory_bytes / 4, 2 * kMinMaxMessageBytes);
  }

  WorkerCore Core() {
    WorkerCore c;
    c.opts = &opts;
    c.metrics = &metrics;
    c.stats = &stats;
    c.deployments = &deployments;
    c.fail = [this](const RequestMeta& meta, WorkerError kind,
                    const std::string& error) { Fail(meta, kind, error); };
    return c;
  }

  std::string Who() const { return "worker " + opts.name; }

  // A channel to `addr`, whose certificate (with TLS) must show `role`.
  // Channels to other devices carry the plan's bulk and wait longer for a
  // ping's answer (kPeerKeepaliveTimeoutMs).
  std::shared_ptr<grpc::Channel> Dial(const std::string& addr,
                                      TlsRole role) const {
    if (opts.channel) return opts.channel;
    return MakeChannel(addr, max_msg, opts.tls.get(), role,
                       role == TlsRole::kDevice ? kPeerKeepaliveTimeoutMs
                                                : kKeepaliveTimeoutMs);
  }

  // What a caller's certificate must show for each RPC (docs/security.md).
  // Every refusal counts as unauthorized on shoal_worker_errors_total,
  // whichever RPC it is (once only some were: 1 of 7 refused calls).
  grpc::Status FromCoordinator(const grpc::ServerContext* ctx,
                               const char* rpc) {
    return CountRefusal(
        RequireRole(*ctx, opts.tls.get(), TlsRole::kCoordinator, Who(), rpc));
  }
  // A coordinator, or a device of a plan deployed here: a certificate of
  // the cluster CA issued to another device (one outside the cluster, or of
  // a plan this worker is not in) gets a refusal and nothing else, not even
  // the id of the plan it might address.
  grpc::Status FromMember(const grpc::ServerContext* ctx, const char* rpc) {
    if (auto s = RequireMember(*ctx, opts.tls.get(), Who(), rpc); !s.ok()) {
      return CountRefusal(s);
    }
    if (opts.tls == nullptr || CallerRole(*ctx) != TlsRole::kDevice) {
      return grpc::Status::OK;
    }
    const std::string name = CallerName(*ctx);
    if (deployments.NamesDevice(name)) return grpc::Status::OK;
    return CountRefusal(grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        Who() + " refuses " + rpc + " from device '" + name + "' (" +
            ctx->peer() +
            "): no plan deployed here names that device, and a device "
            "certificate is good only for talking to the devices of its "
            "plans"));
  }
  grpc::Status CountRefusal(grpc::Status s) {
    if (!s.ok()) metrics.Error(WorkerError::kUnauthorized);
    return s;
  }

  // Counts an RPC's failure on shoal_worker_errors_total: a caught
  // exception as internal, any other as `kind`; a refused caller was
  // counted where it was refused.
  grpc::Status Counted(WorkerError kind, grpc::Status s) {
    if (s.ok()) return s;
    if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      return s;
    } else if (s.error_code() == grpc::StatusCode::INTERNAL) {
      kind = WorkerError::kInternal;
    }
    metrics.Error(kind);
    return s;
  }

  // Tells the coordinator that a request failed here; best effort.
  void Fail(const RequestMeta& meta, WorkerError kind,
            const std::string& error) {
    metrics.Error(kind);
    stats.With([](WorkerStats& s) { s.AddFailed(); });
    scheduler.Drop(meta.id);
    chunks.Drop(meta.id);
    sender.SendAbort(meta, error);
  }

  void PruneBlobs() {
    deployments.PruneBlobs(cache.get(), opts.cache_max_bytes);
  }

  // --- Health, blobs, deploy -------------------------------------------

  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest* req,
                      rpc::HealthReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Health", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "Health"); !s.ok()) return s;
      // Health answers any version, so a coordinator can say what mismatched.
      rep->set_protocol(kProtocolVersion);
      rep->set_name(opts.name);
      rep->set_memory_budget(opts.memory_bytes);
      rep->set_threads(opts.threads);
      rep->set_link_bandwidth_bps(opts.link.bandwidth_bps);
      rep->set_link_latency_s(opts.link.latency_s);
      if (opts.medium) {
        rep->set_medium_path(opts.medium->path());
        rep->set_medium_bandwidth_bps(opts.medium->medium().bandwidth_bps);
      }
      if (opts.board != nullptr) {
        rep->set_board(opts.board->name);
        rep->set_board_speed(opts.board_speed);
      }
      rep->set_dilation(opts.dilation);
      const auto dep = deployments.current();
      rep->set_deployment(dep ? dep->id : "");
      rep->set_uptime_ms(static_cast<int64_t>(MsSince(started)));
      rep->set_process_cpu_seconds(CpuSeconds(true));
      return grpc::Status::OK;
    });
  }

  grpc::Status HaveBlobs(grpc::ServerContext* ctx,
                         const rpc::HaveBlobsRequest* req,
                         rpc::HaveBlobsReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "HaveBlobs", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "HaveBlobs"); !s.ok()) return s;
      if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
      for (const auto& h : req->hashes()) {
        if (!cache->Has(h)) rep->add_missing(h);
      }
      return grpc::Status::OK;
    });
  }

  grpc::Status PutBlobs(grpc::ServerContext* ctx,
                        grpc::ServerReader<rpc::BlobChunk>* reader,
                        rpc::PutBlobsReply* rep) override {
    const HandlerScope in_flight(this);
    if (auto s = FromCoordinator(ctx, "PutBlobs"); !s.ok()) {
      return Counted(WorkerError::kDeployRefused, s);
    }
    return Counted(
        WorkerError::kDeployRefused,
        ReceiveBlobs([reader](rpc::BlobChunk* c) { return reader->Read(c); },
                     rep));
  }

  // PutBlobs' body: `next` gives the stream's chunks until it returns false.
  grpc::Status ReceiveBlobs(const std::function<bool(rpc::BlobChunk*)>& next,
                            rpc::PutBlobsReply* rep) {
    const int64_t cap =
        opts.memory_bytes > 0 ? opts.memory_bytes : (int64_t{16} << 30);
    grpc::Status s = GuardRpc(Who(), "PutBlobs", [&]() -> grpc::Status {
      return ReceiveBlobStream(cache.get(), cap, Who(), next, rep);
    });
    // Uploads count against the cache's size at once, not at the next
    // deploy: uploads never followed by a deployment do not fill the disk.
    PruneBlobs();
    return s;
  }

  // `held`: bytes of a previous deployment kept alongside this one.
  StatusOr<std::shared_ptr<Deployment>> Build(const rpc::DeployRequest& req,
                                              rpc::DeployReply* rep,
                                              int64_t held) {
    DeploymentContext ctx;
    ctx.cache = cache.get();
    ctx.metrics = &metrics;
    ctx.memory_bytes = opts.memory_bytes;
    ctx.backend = opts.backend;
    ctx.threads = opts.threads;
    if (opts.board != nullptr) {
      ctx.board = true;
      ctx.board_rates = ScaleRates(opts.board->rates, opts.board_speed);
    }
    ctx.dial = [this](const std::string& addr) {
      return Dial(addr, TlsRole::kDevice);
    };
    ctx.connect_now = !opts.channel;
    return BuildDeployment(req, ctx, held, rep);
  }

  grpc::Status Deploy(grpc::ServerContext* ctx, const rpc::DeployRequest* req,
                      rpc::DeployReply* rep) override {
    const HandlerScope in_flight(this);
    const grpc::Status st = GuardRpc(Who(), "Deploy", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "Deploy"); !s.ok()) return s;
      if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
      std::lock_guard<std::mutex> deploying(deploy_mu);
      if (auto same =
              deployments.Reuse(req->deployment(), req->keep_previous())) {
        PruneBlobs();
        rep->set_reused(true);
        rep->set_weight_bytes(same->weight_bytes);
        rep->set_activation_bytes(same->activation_bytes);
        rep->set_budget_bytes(opts.memory_bytes);
        return grpc::Status::OK;
      }
      auto d = Build(*req, rep, deployments.HeldBytes(req->keep_previous()));
      if (!d.ok()) return ToGrpc(d.status().WithContext(Who()));
      Install(std::move(d).value(), req->keep_previous());
      return grpc::Status::OK;
    });
    return Counted(WorkerError::kDeployRefused, st);
  }

  // Makes `d` the current deployment. Unless the current one is kept
  // alongside, the requests in flight are dropped and their coordinators
  // told, which would otherwise wait for them until their deadlines.
  void Install(std::shared_ptr<Deployment> d, bool keep_previous) {
    const bool keep = keep_previous && deployments.current() != nullptr;
    std::vector<RequestMeta> dropped;
    if (!keep) dropped = scheduler.DropAll();
    metrics.Deployed(d->plan_id, d->tasks_here);
    deployments.Install(std::move(d), keep);
    stats.With([](WorkerStats& s) { s.ForgetTasks(); });
    PruneBlobs();
    for (const auto& meta : dropped) {
      chunks.Drop(meta.id);
      sender.SendAbort(meta, "request " + meta.id + " was dropped: " +
                                 opts.name + " was given another plan");
    }
  }

  grpc::Status Release(grpc::ServerContext* ctx, const rpc::ReleaseRequest* req,
                       rpc::ReleaseReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Release", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "Release"); !s.ok()) return s;
      if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
      std::lock_guard<std::mutex> deploying(deploy_mu);
      bool changed = false;
      if (deployments.Release(req->plan_id(), &changed)) {
        rep->set_released(true);
      }
      if (changed) {
        stats.With([](WorkerStats& s) { s.ForgetTasks(); });
        const auto dep = deployments.current();
        metrics.PlanNow(dep ? dep->plan_id : "", dep ? dep->tasks_here : 0);
      }
      PruneBlobs();
      return grpc::Status::OK;
    });
  }

  // --- Tensors ---------------------------------------------------------

  // Checks that message `m` is a transfer of deployment `d` to this device,
  // with the shape the plan gives it.
  grpc::Status CheckTransfer(const Deployment& d, const rpc::TensorMessage& m,
                             std::vector<int64_t>* shape) const {
    const Plan& p = d.plan;
    const int xi = m.transfer();
    if (xi < 0 || xi >= static_cast<int>(p.transfers.size()) ||
        p.transfers[xi].dst.task < 0 || m.seq() < 0 ||
        p.DeviceOf(p.transfers[xi].dst.task, m.seq()) != d.device ||
        m.timeout_ms() <= 0 || m.timeout_ms() > kMaxTimeoutMs ||
        m.request().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          Who() + ": transfer " + std::to_string(xi) +
                              " of request " + m.request() +
                              " is not for this device");
    }
    shape->assign(m.shape().begin(), m.shape().end());
    if (*shape != p.transfers[xi].dst.region.extent()) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          Who() + ": transfer " + std::to_string(xi) + " has the wrong shape");
    }
    return grpc::Status::OK;
  }

  grpc::Status Send(grpc::ServerContext* ctx, const rpc::TensorMessage* m,
                    rpc::Ack*) override {
    const HandlerScope in_flight(this);
    const auto received = Clock::now();
    const grpc::Status st = GuardRpc(Who(), "Send", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Send"); !s.ok()) return s;
      if (auto s = CheckProtocol(m->protocol(), Who()); !s.ok()) return s;
      auto found = deployments.ForPlan(m->deployment(), Who());
      if (!found.ok()) return ToGrpc(found.status());
      const std::shared_ptr<Deployment> d = std::move(found).value();
      std::vector<int64_t> shape;
      if (auto s = CheckTransfer(*d, *m, &shape); !s.ok()) return s;
      const Plan& p = d->plan;
      // A broadcast: the transfers this device delivers, and those it
      // passes on (each chunk as soon as it is here).
      std::vector<int> local{m->transfer()}, onward;
      if (auto s = SplitRelay(p, d->device, *m, &local, &onward); !s.ok()) {
        return ToGrpc(s.WithContext(Who()));
      }
      RequestMeta meta{
          m->request(), m->seq(), m->reply_to(),
          Clock::now() + std::chrono::milliseconds(m->timeout_ms())};
      if (!onward.empty()) {
        sender.QueueHops(
            d, meta,
            RelayHops(p, onward, d->device, m->seq(), p.broadcast.fanout), *m,
            /*readdress_only=*/true);
      }
      const Transfer& x = p.transfers[m->transfer()];
      const int from = p.DeviceOf(x.src.task, m->seq());
      if (from != d->device) {
        stats.With([&](WorkerStats& s) { s.AddReceived(m->data().size()); });
        if (from >= 0) d->received_from[from]->Increment(m->data().size());
      }
      const rpc::TensorMessage* whole = m;
      std::optional<rpc::TensorMessage> assembled;
      if (m->total_bytes() > 0) {
        auto r = chunks.Add(*m, WireSizeOf(*m, x.src.region.elements()),
                            p.broadcast.chunk_bytes, meta.expiry);
        if (!r.ok()) return ToGrpc(r.status().WithContext(Who()));
        if (!r->has_value()) return grpc::Status::OK;
        assembled = std::move(r).value();
        whole = &*assembled;
      }
      auto part = TensorFromMessage(*whole, shape);
      if (!part.ok()) return ToGrpc(part.status().WithContext(Who()));
      if (opts.board != nullptr && from != d->device) {
        // An emulated board's CPU to receive it, from when it came in.
        PaceTo(received,
               opts.dilation * BoardMessageSeconds(ScaleRates(opts.board->rates,
                                                              opts.board_speed),
                                                   m->data().size()));
      }
      Status s = scheduler.Deliver(d, meta, local, *part);
      return s.ok() ? grpc::Status::OK : ToGrpc(s.WithContext(Who()));
    });
    return Counted(WorkerError::kMessageRefused, st);
  }

  grpc::Status Abort(grpc::ServerContext* ctx, const rpc::AbortMessage* m,
                     rpc::Ack*) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Abort", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Abort"); !s.ok()) return s;
      if (auto s = CheckProtocol(m->protocol(), Who()); !s.ok()) return s;
      chunks.Drop(m->request());
      scheduler.Drop(m->request());
      return grpc::Status::OK;
    });
  }

  grpc::Status Stats(grpc::ServerContext* ctx, const rpc::StatsRequest* req,
                     rpc::StatsReply* rep) override {
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

  // --- Profiling (shoal profile) -----------------------------------------

  grpc::Status Profile(grpc::ServerContext* ctx, const rpc::ProfileRequest* req,
                       rpc::ProfileReply* rep) override {
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
      // against the budget like a deployment's: a caller could otherwise
      // name a graph of any size.
      int64_t need = PeakActivationBytes(*g);
      for (const auto& [name, t] : g->tensors) {
        if (t.is_weight()) need += NumElements(t.shape) * kBytesPerElement;
      }
      if (opts.memory_bytes > 0 && need > opts.memory_bytes) {
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            Who() + " refuses to profile a graph that needs " +
                                MiB(need) +
                                " (weights and activations); its memory "
                                "budget is " +
                                MiB(opts.memory_bytes));
      }
      TimingOptions o;
      o.seed = req->seed();
      o.min_runs = std::max(1, req->min_runs());
      o.min_seconds = std::max(0.0, req->min_seconds());
      o.max_seconds = req->max_seconds() > 0 ? req->max_seconds() : 10.0;
      o.threads = opts.threads;
      o.backend = opts.backend;
      o.cpu_fraction = opts.cpu_fraction;
      o.per_node = req->per_node();
      auto t = TimeGraph(*g, o);
      if (!t.ok()) return ToGrpc(t.status().WithContext(Who() + " profiling"));
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

  grpc::Status ProbeLink(grpc::ServerContext* ctx,
                         const rpc::LinkProbeRequest* req,
                         rpc::LinkProbeReply* rep) override {
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

  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Sink", [&]() -> grpc::Status {
      // Any certificate of the CA: a link probe (ProbeLink, asked of
      // another worker by a coordinator) arrives before a plan names the
      // prober here, and a sink keeps nothing and answers nothing.
      if (auto s =
              CountRefusal(RequireMember(*ctx, opts.tls.get(), Who(), "Sink"));
          !s.ok()) {
        return s;
      }
      return CheckProtocol(m->protocol(), Who());
    });
  }

  // GET /metrics: the counters as they stand, and the gauges read now.
  HttpReply MetricsPage() {
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

  void Start() {
    scheduler.Start();
    sender.Start();
  }

  // Every kTrimEvery, when no RPC handler has run for kQuiet: a trim
  // between requests, not beside one (it takes the heaps' locks).
  void StartTrimmer() {
    trimmer = std::thread([this] {
      constexpr auto kTrimEvery = std::chrono::seconds(2);
      constexpr auto kQuiet = std::chrono::seconds(1);
      std::unique_lock<std::mutex> lock(handlers_mu);
      while (!trimmer_cv.wait_for(lock, kTrimEvery,
                                  [&] { return stopped.load(); })) {
        if (handlers > 0 || Clock::now() - last_handler_end < kQuiet) {
          continue;
        }
        lock.unlock();
        TrimFreedMemory();
        lock.lock();
      }
    });
  }

  void Stop() {
    metrics_http.reset();  // its pages read what is stopped below
    if (stopped.exchange(true)) return;
    // The server first: peers see the connection go at once, and no new
    // handler starts while the threads stop.
    if (server) server->Shutdown(DeadlineIn(500));
    scheduler.Stop();
    sender.Stop();
    std::unique_lock<std::mutex> lock(handlers_mu);
    handlers_cv.wait(lock, [&] { return handlers == 0; });
    trimmer_cv.notify_all();
    lock.unlock();
    if (trimmer.joinable()) trimmer.join();
  }
};

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() { impl_->Stop(); }

StatusOr<std::unique_ptr<Worker>> Worker::StartInProcess(
    const WorkerOptions& opts) {
  auto impl = std::make_unique<Impl>(opts);
  ASSIGN_OR_RETURN(impl->cache, BlobCache::Open(opts.cache_dir));
  impl->Start();
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

rpc::Worker::Service* Worker::service() { return impl_.get(); }

grpc::Status Worker::PutBlobs(const std::vector<rpc::BlobChunk>& chunks,
                              rpc::PutBlobsReply* rep) {
  const Impl::HandlerScope in_flight(impl_.get());
  size_t i = 0;
  return impl_->ReceiveBlobs(
      [&](rpc::BlobChunk* c) {
        if (i == chunks.size()) return false;
        *c = chunks[i++];
        return true;
      },
      rep);
}

StatusOr<std::unique_ptr<Worker>> Worker::Start(const WorkerOptions& opts) {
  auto impl = std::make_unique<Impl>(opts);
  ASSIGN_OR_RETURN(impl->cache, BlobCache::Open(opts.cache_dir));
  grpc::ServerBuilder b;
  b.AddListeningPort(opts.listen, ServerCredentialsFor(opts.tls.get()),
                     &impl->port);
  ServerLimits limits;
  limits.max_message_bytes = impl->max_msg;
  limits.memory_quota_bytes = impl->ServerQuota();
  limits.idle_ms = opts.idle_connection_ms;
  limits.age_ms = opts.connection_age_ms;
  limits.grace_ms = opts.connection_grace_ms;
  limits.max_threads = kWorkerMaxThreads;
  ConfigureServer(&b, limits);
  b.RegisterService(impl.get());
  impl->server = b.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    return Unavailable("worker " + opts.name + " cannot listen on " +
                       opts.listen +
                       " (is another process on that port, or is the host "
                       "not an address of this machine?)");
  }
  Impl* p = impl.get();
  if (!opts.metrics_listen.empty()) {
    // Under the worker's trust: with TLS, HTTPS with its own certificate,
    // and only a coordinator certificate of the CA is answered (the page
    // names the plan and the peers).
    HttpServerOptions ho;
    ho.tls = opts.tls;
    auto http = HttpServer::Start(
        opts.metrics_listen, "worker " + opts.name + " --metrics",
        {{"/metrics", [p] { return p->MetricsPage(); }}}, ho);
    if (!http.ok()) {
      impl->Stop();
      return http.status();
    }
    impl->metrics_http = std::move(http).value();
  }
  p->Start();
  p->StartTrimmer();
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

int Worker::port() const { return impl_->port; }

int Worker::metrics_port() const {
  return impl_->metrics_http ? impl_->metrics_http->port() : 0;
}

void Worker::Wait() {
  if (impl_->server) impl_->server->Wait();
}

void Worker::Shutdown() { impl_->Stop(); }

}  // namespace shoal
