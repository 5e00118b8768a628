#include "runtime/worker.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <thread>

#include "graph/cost.h"
#include "metrics/exposition.h"
#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "plan/broadcast.h"
#include "plan/graph_json.h"
#include "plan/plan_cost.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "plan/trace.h"
#include "runtime/blob_cache.h"
#include "runtime/chunk_assembler.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/profiling.h"
#include "runtime/relay_messages.h"
#include "runtime/rpc_guard.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "runtime/worker_stats.h"
#include "util/clock.h"
#include "util/units.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;
// Enough that chunks of a broadcast (plan/broadcast.h), each waiting out
// the link's latency in its sender, keep the link busy while this device
// also forwards chunks and sends its own outputs.
// The simulator models as many (SimOptions::sender_threads).
constexpr int kSenderThreads = 8;
constexpr int64_t kMaxTimeoutMs = 3600 * 1000;
constexpr size_t kMaxReplyStubs = 8;

struct RequestMeta {
  std::string id;
  int64_t seq = 0;
  std::string reply_to;
  Clock::time_point expiry;
};

struct Mailbox {
  std::map<std::string, Tensor> inputs;
  int pending = 0;
  Clock::time_point first;
  int64_t bytes = 0;  // of `inputs`
};

struct RequestState {
  RequestMeta meta;
  std::map<int, Mailbox> boxes;
  std::set<int> done;
  int my_tasks = 0;
  int64_t held = 0;  // bytes of its mailboxes
};

// What requests in flight may hold in mailboxes: one message opens a
// mailbox as large as its task's whole input, so without a bound a peer
// could make a worker allocate gigabytes with a few bytes each. At most
// this many requests at once, and half the memory budget (4 GiB without
// one) for their inputs.
constexpr size_t kMaxRequestsInFlight = 256;
constexpr int64_t kUnbudgetedMailboxBytes = int64_t{4} << 30;

struct Ready {
  std::shared_ptr<Deployment> dep;
  RequestMeta meta;
  int task = 0;
  std::vector<Tensor> inputs;
  Clock::time_point at;                   // its last input arrived
  bool operator<(const Ready& o) const {  // priority_queue: oldest first
    if (meta.seq != o.meta.seq) return meta.seq > o.meta.seq;
    return task > o.task;
  }
};

struct Outgoing {
  std::shared_ptr<Deployment> dep;
  RequestMeta meta;
  int dst_device = 0;  // -1: the coordinator (model output)
  rpc::TensorMessage msg;
  Clock::time_point queued;
};

}  // namespace

struct Worker::Impl final : public rpc::Worker::Service {
  WorkerOptions opts;
  WorkerMetrics metrics;
  int64_t max_msg = kDefaultMaxMessageBytes;
  LinkShaper shaper{Link{}};
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  Clock::time_point started = Clock::now();

  std::mutex mu;  // guards everything below but the sender queue
  std::condition_variable ready_cv;
  bool stopping = false;
  std::unique_ptr<BlobCache> cache;  // set by Start; has its own lock
  std::shared_ptr<Deployment> dep;
  // The deployment before `dep`, kept while its requests drain
  // (DeployRequest.keep_previous) until Release or the next Deploy.
  std::shared_ptr<Deployment> prev;
  std::map<std::string, RequestState> requests;
  int64_t mailbox_bytes = 0;  // the sum of every request's `held`
  std::priority_queue<Ready> ready;
  WorkerStats stats;      // since the last reset
  ChunkAssembler chunks;  // transfers arriving in chunks; its own lock

  std::mutex out_mu;
  std::condition_variable out_cv;
  std::deque<Outgoing> out_queue;
  // Messages queued or being sent: their spans are not recorded yet.
  std::atomic<int> unsent{0};
  // Per coordinator address, its stub and when it was last used. Each
  // `shoal serve` plan generation has a reply address of its own: the
  // least recently used beyond kMaxReplyStubs are dropped, so a
  // long-running serve that re-plans often does not grow a worker.
  struct ReplyChannel {
    std::shared_ptr<rpc::Worker::Stub> stub;
    Clock::time_point used;
  };
  std::map<std::string, ReplyChannel> reply_stubs;

  // RPC handlers running now; Stop waits until none is. gRPC's Shutdown
  // waits for its handler threads too, but through abseil's
  // synchronisation, which ThreadSanitizer cannot see, and a direct call
  // (Worker::PutBlobs, the in-process transport) has no server to wait for.
  std::mutex handlers_mu;
  std::condition_variable handlers_cv;
  int handlers = 0;
  struct HandlerScope {
    explicit HandlerScope(Impl* p) : impl(p) {
      std::lock_guard<std::mutex> lock(impl->handlers_mu);
      ++impl->handlers;
    }
    ~HandlerScope() {
      std::lock_guard<std::mutex> lock(impl->handlers_mu);
      if (--impl->handlers == 0) impl->handlers_cv.notify_all();
    }
    HandlerScope(const HandlerScope&) = delete;
    HandlerScope& operator=(const HandlerScope&) = delete;
    Impl* impl;
  };

  std::thread compute_thread;
  std::vector<std::thread> senders;
  std::mutex deploy_mu;  // one deployment at a time
  // Last, so destroyed first: its page reads the members above.
  std::unique_ptr<HttpServer> metrics_http;

  explicit Impl(const WorkerOptions& o) : opts(o), shaper(o.link, o.medium) {
    if (o.max_message_bytes > 0) max_msg = o.max_message_bytes;
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
  grpc::Status FromCoordinator(const grpc::ServerContext* ctx,
                               const char* rpc) const {
    return RequireRole(*ctx, opts.tls.get(), TlsRole::kCoordinator, Who(), rpc);
  }
  grpc::Status FromMember(const grpc::ServerContext* ctx,
                          const char* rpc) const {
    return RequireMember(*ctx, opts.tls.get(), Who(), rpc);
  }

  // --- Health, blobs, deploy -------------------------------------------

  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest* req,
                      rpc::HealthReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Health", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Health"); !s.ok()) return s;
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
      std::lock_guard<std::mutex> lock(mu);
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
    grpc::Status s = ReceiveBlobsUnpruned(next, rep);
    // Uploads count against the cache's size at once, not at the next
    // deploy: uploads never followed by a deployment do not fill the disk.
    std::lock_guard<std::mutex> lock(mu);
    PruneBlobsLocked();
    return s;
  }

  grpc::Status ReceiveBlobsUnpruned(
      const std::function<bool(rpc::BlobChunk*)>& next,
      rpc::PutBlobsReply* rep) {
    return GuardRpc(Who(), "PutBlobs", [&]() -> grpc::Status {
      // Each blob streams to a file of the cache: in memory, one chunk.
      rpc::BlobChunk c;
      std::string hash;
      std::unique_ptr<BlobCache::Writer> writer;
      int64_t total = -1, got = 0;
      const int64_t cap =
          opts.memory_bytes > 0 ? opts.memory_bytes : (int64_t{16} << 30);
      auto finish = [&]() -> grpc::Status {
        if (Status s = writer->Commit(); !s.ok()) return ToGrpc(s);
        writer.reset();
        rep->set_blobs(rep->blobs() + 1);
        rep->set_bytes(rep->bytes() + total);
        hash.clear();
        total = -1;
        return grpc::Status::OK;
      };
      while (next(&c)) {
        if (auto s = CheckProtocol(c.protocol(), Who()); !s.ok()) return s;
        if (total < 0) {
          if (c.total_bytes() > cap) {
            return grpc::Status(
                grpc::StatusCode::FAILED_PRECONDITION,
                Who() + " refuses the deployment: one weight blob takes " +
                    MiB(c.total_bytes()) + " but its memory budget is " +
                    MiB(cap));
          }
          if (c.hash().empty() || c.total_bytes() < 0 ||
              c.total_bytes() % 4 != 0) {
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                Who() + ": a blob of " +
                                    std::to_string(c.total_bytes()) +
                                    " bytes is invalid");
          }
          auto w = cache->Begin(c.hash(), c.total_bytes());
          if (!w.ok()) return ToGrpc(w.status().WithContext(Who()));
          writer = std::move(w).value();
          hash = c.hash();
          total = c.total_bytes();
          got = 0;
        } else if (!c.hash().empty() && c.hash() != hash) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "blob " + hash + " is incomplete");
        }
        if (Status s = writer->Append(c.data()); !s.ok()) return ToGrpc(s);
        got += c.data().size();
        if (got == total) {
          if (auto s = finish(); !s.ok()) return s;
        }
      }
      if (total >= 0) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "blob " + hash + " is incomplete");
      }
      return grpc::Status::OK;
    });
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
      int64_t held = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (dep && dep->id == req->deployment()) {
          if (!req->keep_previous() && prev) {
            prev.reset();
            PruneBlobsLocked();
          }
          rep->set_reused(true);
          rep->set_weight_bytes(dep->weight_bytes);
          rep->set_activation_bytes(dep->activation_bytes);
          rep->set_budget_bytes(opts.memory_bytes);
          return grpc::Status::OK;
        }
        if (req->keep_previous() && dep) {
          held = dep->weight_bytes + dep->activation_bytes;
        }
      }
      auto d = Build(*req, rep, held);
      if (!d.ok()) return ToGrpc(d.status().WithContext(Who()));
      std::vector<RequestMeta> dropped;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (req->keep_previous() && dep) {
          prev = std::move(dep);  // its requests in flight go on
        } else {
          prev.reset();
          for (const auto& [id, r] : requests) dropped.push_back(r.meta);
          requests.clear();
          mailbox_bytes = 0;
        }
        dep = std::move(d).value();
        stats.ForgetTasks();
        metrics.Deployed(dep->plan_id, dep->tasks_here);
        PruneBlobsLocked();
      }
      // Their coordinators would otherwise wait for them until the deadline.
      for (const auto& meta : dropped) {
        chunks.Drop(meta.id);
        SendAbort(meta, "request " + meta.id + " was dropped: " + opts.name +
                            " was given another plan");
      }
      return grpc::Status::OK;
    });
    return Counted(WorkerError::kDeployRefused, st);
  }

  // Keeps the blobs of the deployments held, and others up to the cache's
  // size: a redeploy of the same weights is free, and the disk does not
  // fill with every plan.
  void PruneBlobsLocked() {
    std::set<std::string> keep;
    for (const auto* d : {dep.get(), prev.get()}) {
      if (d != nullptr)
        keep.insert(d->blob_hashes.begin(), d->blob_hashes.end());
    }
    cache->Trim(keep, opts.cache_max_bytes);
  }

  grpc::Status Release(grpc::ServerContext* ctx, const rpc::ReleaseRequest* req,
                       rpc::ReleaseReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Release", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "Release"); !s.ok()) return s;
      if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
      std::lock_guard<std::mutex> deploying(deploy_mu);
      std::lock_guard<std::mutex> lock(mu);
      if (prev && prev->plan_id == req->plan_id()) {
        prev.reset();
        rep->set_released(true);
      }
      if (dep && dep->plan_id == req->plan_id()) {
        // A previous deployment kept alongside is the current one again (a
        // switch that failed on another device is undone this way).
        dep = std::move(prev);
        stats.ForgetTasks();
        rep->set_released(true);
        metrics.PlanNow(dep ? dep->plan_id : "", dep ? dep->tasks_here : 0);
      }
      PruneBlobsLocked();
      return grpc::Status::OK;
    });
  }

  // --- Tensors ---------------------------------------------------------

  // Puts one transfer's region into its task's mailbox; queues the task
  // when its last input has arrived. Called with `mu` held.
  Status DeliverLocked(const std::shared_ptr<Deployment>& d,
                       const RequestMeta& meta, int xi, const Tensor& part) {
    const Plan& p = d->plan;
    const Transfer& x = p.transfers[xi];
    const auto now = Clock::now();
    for (auto it = requests.begin(); it != requests.end();) {
      if (it->second.meta.expiry < now) {
        mailbox_bytes -= it->second.held;
        it = requests.erase(it);
      } else {
        ++it;
      }
    }
    if (!requests.count(meta.id) && requests.size() >= kMaxRequestsInFlight) {
      return ResourceExhausted(
          opts.name + " has " + std::to_string(requests.size()) +
          " requests in flight, the most it takes; request " + meta.id +
          " is refused");
    }
    auto [it, fresh] = requests.try_emplace(meta.id);
    RequestState& r = it->second;
    if (fresh) {
      r.meta = meta;
      for (const auto& t : p.tasks) {
        if (p.DeviceOf(t.id, meta.seq) == d->device) r.my_tasks++;
      }
    }
    const int task = x.dst.task;
    if (r.done.count(task)) {
      return InvalidArgument("transfer " + std::to_string(xi) +
                             " arrived twice for request " + meta.id);
    }
    auto [bit, new_box] = r.boxes.try_emplace(task);
    Mailbox& box = bit->second;
    const Task& t = p.tasks[task];
    if (new_box) {
      int64_t bytes = 0;
      for (const auto& in : t.fragment.inputs) {
        bytes +=
            NumElements(t.fragment.tensors.at(in).shape) * kBytesPerElement;
      }
      const int64_t cap = opts.memory_bytes > 0 ? opts.memory_bytes / 2
                                                : kUnbudgetedMailboxBytes;
      if (mailbox_bytes + bytes > cap) {
        r.boxes.erase(bit);
        if (r.boxes.empty() && r.done.empty()) requests.erase(it);
        return ResourceExhausted(
            opts.name + " holds " + MiB(mailbox_bytes) +
            " of inputs for requests in flight; task " + t.name +
            " of request " + meta.id + " would take " + MiB(bytes) +
            " more, over its " + MiB(cap) + " (half its memory budget)");
      }
      box.pending = d->incoming[task];
      box.first = now;
      box.bytes = bytes;
      r.held += bytes;
      mailbox_bytes += bytes;
      for (const auto& in : t.fragment.inputs) {
        box.inputs[in] = Tensor(t.fragment.tensors.at(in).shape);
      }
    }
    auto dst = box.inputs.find(x.dst.tensor);
    if (dst == box.inputs.end()) {
      return Internal("transfer into unknown tensor " + x.dst.tensor);
    }
    RETURN_IF_ERROR(CopyRegion(part, Region::Full(part.shape), &dst->second,
                               x.dst.region, x.merge));
    if (--box.pending > 0) return Status::Ok();
    Ready rd;
    rd.dep = d;
    rd.meta = r.meta;
    rd.task = task;
    rd.at = now;
    for (const auto& in : t.fragment.inputs) {
      rd.inputs.push_back(std::move(box.inputs.at(in)));
    }
    stats.AddWait(
        task,
        std::chrono::duration<double, std::milli>(now - box.first).count());
    r.held -= box.bytes;
    mailbox_bytes -= box.bytes;
    r.boxes.erase(bit);
    r.done.insert(task);
    if (static_cast<int>(r.done.size()) == r.my_tasks) requests.erase(it);
    ready.push(std::move(rd));
    stats.AddQueueDepth(ready.size());
    ready_cv.notify_one();
    return Status::Ok();
  }

  grpc::Status Send(grpc::ServerContext* ctx, const rpc::TensorMessage* m,
                    rpc::Ack*) override {
    const HandlerScope in_flight(this);
    const grpc::Status st = GuardRpc(Who(), "Send", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Send"); !s.ok()) return s;
      if (auto s = CheckProtocol(m->protocol(), Who()); !s.ok()) return s;
      std::shared_ptr<Deployment> d;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!dep && !prev) {
          return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                              Who() + " has no deployment");
        }
        for (const auto& x : {dep, prev}) {
          if (x && x->plan_id == m->deployment()) d = x;
        }
        if (!d) {
          return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                              Who() + " holds another plan (" +
                                  (dep ? dep->plan_id : prev->plan_id) +
                                  "); deploy the plan again");
        }
      }
      const Plan& p = d->plan;
      const int xi = m->transfer();
      if (xi < 0 || xi >= static_cast<int>(p.transfers.size()) ||
          p.transfers[xi].dst.task < 0 || m->seq() < 0 ||
          p.DeviceOf(p.transfers[xi].dst.task, m->seq()) != d->device ||
          m->timeout_ms() <= 0 || m->timeout_ms() > kMaxTimeoutMs ||
          m->request().empty()) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            Who() + ": transfer " + std::to_string(xi) +
                                " of request " + m->request() +
                                " is not for this device");
      }
      const Transfer& x = p.transfers[xi];
      std::vector<int64_t> shape(m->shape().begin(), m->shape().end());
      if (shape != x.dst.region.extent()) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            Who() + ": transfer " + std::to_string(xi) +
                                " has the wrong shape");
      }
      // A broadcast: the transfers this device delivers, and those it
      // passes on (each chunk as soon as it is here).
      std::vector<int> local{xi}, onward;
      if (auto s = SplitRelay(*d, *m, &local, &onward); !s.ok()) {
        return ToGrpc(s.WithContext(Who()));
      }
      RequestMeta meta{
          m->request(), m->seq(), m->reply_to(),
          Clock::now() + std::chrono::milliseconds(m->timeout_ms())};
      if (!onward.empty()) {
        QueueSends(
            d, meta,
            RelayHops(p, onward, d->device, m->seq(), p.broadcast.fanout), *m,
            /*readdress_only=*/true);
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        const int from = p.DeviceOf(x.src.task, m->seq());
        if (from != d->device) {
          stats.AddReceived(m->data().size());
          if (from >= 0) d->received_from[from]->Increment(m->data().size());
        }
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
      std::lock_guard<std::mutex> lock(mu);
      for (int t : local) {
        Status s = DeliverLocked(d, meta, t, *part);
        if (!s.ok()) return ToGrpc(s.WithContext(Who()));
      }
      return grpc::Status::OK;
    });
    return Counted(WorkerError::kMessageRefused, st);
  }

  // Counts an RPC's failure on shoal_worker_errors_total: a caller without
  // the certificate it needs as unauthorized, a caught exception as
  // internal, any other as `kind`.
  grpc::Status Counted(WorkerError kind, grpc::Status s) {
    if (s.ok()) return s;
    if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      kind = WorkerError::kUnauthorized;
    } else if (s.error_code() == grpc::StatusCode::INTERNAL) {
      kind = WorkerError::kInternal;
    }
    metrics.Error(kind);
    return s;
  }

  // Splits message m's relay list into the transfers this device delivers
  // (added to `local`) and those it forwards, after checking that each is a
  // transfer of the plan with m's source, named once: a peer cannot make
  // this device send what the plan does not send.
  static Status SplitRelay(const Deployment& d, const rpc::TensorMessage& m,
                           std::vector<int>* local, std::vector<int>* onward) {
    if (m.relay().empty()) return Status::Ok();
    const Plan& p = d.plan;
    const int n = static_cast<int>(p.transfers.size());
    const Transfer& x = p.transfers[m.transfer()];
    if (p.broadcast.fanout <= 0 || m.relay_size() >= n) {
      return InvalidArgument("transfer " + std::to_string(m.transfer()) +
                             " comes with a relay list the plan does not have");
    }
    std::set<int> seen{m.transfer()};
    for (int r : m.relay()) {
      if (r < 0 || r >= n || !seen.insert(r).second ||
          p.transfers[r].dst.task < 0 || !SameSource(p.transfers[r], x)) {
        return InvalidArgument("transfer " + std::to_string(m.transfer()) +
                               " names transfer " + std::to_string(r) +
                               " to relay, which does not carry its bytes");
      }
      const int dev = p.DeviceOf(p.transfers[r].dst.task, m.seq());
      (dev == d.device ? local : onward)->push_back(r);
    }
    return Status::Ok();
  }

  // Queues the messages for `hops`: the chunks of `header`'s data, or,
  // with readdress_only, `header` itself (a chunk being forwarded) to each.
  void QueueSends(const std::shared_ptr<Deployment>& d, const RequestMeta& meta,
                  const std::vector<RelayHop>& hops, rpc::TensorMessage header,
                  bool readdress_only) {
    std::vector<std::pair<int, rpc::TensorMessage>> sends;
    if (readdress_only) {
      for (const RelayHop& h : hops) {
        sends.emplace_back(h.device, Readdress(header, h));
      }
    } else {
      const std::string bytes = std::move(*header.mutable_data());
      header.clear_data();
      sends = ChunkedSends(header, hops, bytes, d->plan.broadcast.chunk_bytes);
    }
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(out_mu);
    for (auto& [dev, msg] : sends) {
      Outgoing o;
      o.dep = d;
      o.meta = meta;
      o.dst_device = dev;
      o.queued = now;
      o.msg = std::move(msg);
      unsent++;
      out_queue.push_back(std::move(o));
    }
    out_cv.notify_all();
  }

  grpc::Status Abort(grpc::ServerContext* ctx, const rpc::AbortMessage* m,
                     rpc::Ack*) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Abort", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Abort"); !s.ok()) return s;
      if (auto s = CheckProtocol(m->protocol(), Who()); !s.ok()) return s;
      chunks.Drop(m->request());
      std::lock_guard<std::mutex> lock(mu);
      DropRequestLocked(m->request());
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
        const auto until = Clock::now() + std::chrono::seconds(1);
        while (unsent > 0 && Clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      rep->set_name(opts.name);
      stats.Report(dep ? &dep->plan : nullptr, req->timeline(), rep);
      rep->set_now_ns(SteadyNs(Clock::now()));
      if (req->reset()) stats.Reset();
      return grpc::Status::OK;
    });
  }

  // --- Profiling (shoal profile) -----------------------------------------

  grpc::Status Profile(grpc::ServerContext* ctx, const rpc::ProfileRequest* req,
                       rpc::ProfileReply* rep) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Profile", [&]() -> grpc::Status {
      if (auto s = FromCoordinator(ctx, "Profile"); !s.ok()) return s;
      if (auto s = CheckProtocol(req->protocol(), Who()); !s.ok()) return s;
      StatusOr<Graph> g = InvalidArgument("graph is not JSON");
      try {
        g = GraphFromJson(nlohmann::json::parse(req->graph_json()));
      } catch (const std::exception& e) {
        g = InvalidArgument(std::string("graph is not JSON: ") + e.what());
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
      rep->set_threads(opts.threads);
      for (const auto& n : t->node_seconds) {
        rpc::NodeSeconds* r = rep->add_nodes();
        r->set_node(n.node);
        r->set_seconds(n.seconds);
      }
      return grpc::Status::OK;
    });
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
        rep->add_seconds(MsSince(t0) / 1e3);
      }
      rep->set_cpu_seconds(CpuSeconds(true) - cpu0);
      return grpc::Status::OK;
    });
  }

  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override {
    const HandlerScope in_flight(this);
    return GuardRpc(Who(), "Sink", [&]() -> grpc::Status {
      if (auto s = FromMember(ctx, "Sink"); !s.ok()) return s;
      return CheckProtocol(m->protocol(), Who());
    });
  }

  // --- Compute and send --------------------------------------------------

  std::shared_ptr<rpc::Worker::Stub> ReplyStub(const std::string& addr) {
    std::lock_guard<std::mutex> lock(out_mu);
    auto& s = reply_stubs[addr];
    // With TLS, outputs and aborts go only to a coordinator of the cluster,
    // whatever address a request names.
    if (!s.stub) {
      s.stub = rpc::Worker::NewStub(Dial(addr, TlsRole::kCoordinator));
    }
    s.used = Clock::now();
    auto stub = s.stub;  // a sender may still hold a dropped one
    while (reply_stubs.size() > kMaxReplyStubs) {
      auto oldest = reply_stubs.begin();
      for (auto it = reply_stubs.begin(); it != reply_stubs.end(); ++it) {
        if (it->second.used < oldest->second.used) oldest = it;
      }
      reply_stubs.erase(oldest);
    }
    return stub;
  }

  void DropRequestLocked(const std::string& id) {
    auto it = requests.find(id);
    if (it == requests.end()) return;
    mailbox_bytes -= it->second.held;
    requests.erase(it);
  }

  // Tells the coordinator that a request failed here; best effort.
  void Fail(const RequestMeta& meta, WorkerError kind,
            const std::string& error) {
    metrics.Error(kind);
    {
      std::lock_guard<std::mutex> lock(mu);
      stats.AddFailed();
      DropRequestLocked(meta.id);
    }
    chunks.Drop(meta.id);
    SendAbort(meta, error);
  }

  void SendAbort(const RequestMeta& meta, const std::string& error) {
    if (meta.reply_to.empty()) return;
    rpc::AbortMessage a;
    a.set_protocol(kProtocolVersion);
    a.set_request(meta.id);
    a.set_device(opts.name);
    a.set_error(error);
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(2000));
    rpc::Ack ack;
    ReplyStub(meta.reply_to)->Abort(&ctx, a, &ack);
  }

  void ComputeLoop() {
    SetKernelThreads(opts.threads);
    while (true) {
      Ready rd;
      {
        std::unique_lock<std::mutex> lock(mu);
        ready_cv.wait(lock, [&] { return stopping || !ready.empty(); });
        if (stopping) return;
        rd = std::move(const_cast<Ready&>(ready.top()));
        ready.pop();
      }
      // An exception fails this request, never the thread: a worker
      // whose compute thread died would take requests and answer none.
      try {
        RunReady(rd);
      } catch (const std::exception& e) {
        Fail(rd.meta, WorkerError::kInternal,
             "task " + rd.dep->plan.tasks[rd.task].name + " on " + opts.name +
                 " failed on an unexpected condition: " + e.what());
      }
    }
  }

  // Runs one task whose inputs are all here and sends its outputs on.
  void RunReady(Ready& rd) {
    std::vector<Tensor> outs;
    if (!ComputeTask(rd, &outs)) return;
    const Task& t = rd.dep->plan.tasks[rd.task];
    std::map<std::string, const Tensor*> srcs;
    for (size_t i = 0; i < rd.inputs.size(); ++i) {
      srcs[t.fragment.inputs[i]] = &rd.inputs[i];
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      srcs[t.fragment.outputs[i]] = &outs[i];
    }
    std::set<int> grouped;
    if (!SendBroadcasts(rd, srcs, &grouped)) return;
    SendOutputs(rd, srcs, grouped);
  }

  // Runs the task (paced to the device's share of a core) and records its
  // time; false when the request expired or the task failed, which fails
  // the request.
  bool ComputeTask(Ready& rd, std::vector<Tensor>* outs) {
    const Deployment& d = *rd.dep;
    const Task& t = d.plan.tasks[rd.task];
    if (Clock::now() > rd.meta.expiry) {
      Fail(rd.meta, WorkerError::kRequestExpired,
           "request " + rd.meta.id + " expired before task " + t.name +
               " could run");
      return false;
    }
    const auto t0 = Clock::now();
    const double cpu0 = CpuSeconds(opts.threads > 1);
    Status st =
        d.exec[rd.task] ? d.exec[rd.task]->Run(rd.inputs, outs) : Status::Ok();
    PaceCompute(opts.cpu_fraction, t0, CpuSeconds(opts.threads > 1) - cpu0);
    const double ms = MsSince(t0);
    if (d.task_seconds[rd.task] != nullptr) {
      d.task_seconds[rd.task]->Observe(ms / 1e3);
    }
    metrics.busy_seconds().Increment(ms / 1e3);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (rd.dep == dep) {  // a draining previous plan's tasks differ
        stats.AddRun(rd.task, ms);
        stats.AddSpan(rd.meta.seq, rd.task, -1, rd.at, t0, Clock::now());
      }
      stats.AddBusy(ms);
    }
    if (!st.ok()) {
      Fail(rd.meta, WorkerError::kTaskFailed,
           "task " + t.name + " failed: " + st.message());
      return false;
    }
    return true;
  }

  // A tensor message of this request and deployment, without its payload.
  static void AddressMessage(const Ready& rd, rpc::TensorMessage* m) {
    m->set_protocol(kProtocolVersion);
    m->set_request(rd.meta.id);
    m->set_seq(rd.meta.seq);
    m->set_reply_to(rd.meta.reply_to);
    m->set_deployment(rd.dep->plan_id);
  }

  // Bytes that several devices read go out as broadcast trees; the
  // transfers they carry are added to `grouped`. False when the request
  // failed.
  bool SendBroadcasts(const Ready& rd,
                      const std::map<std::string, const Tensor*>& srcs,
                      std::set<int>* grouped) {
    const Deployment& d = *rd.dep;
    const auto groups =
        BroadcastGroups(d.plan, d.outgoing[rd.task], d.device, rd.meta.seq);
    for (const auto& g : groups) {
      const Transfer& x = d.plan.transfers[g.front()];
      auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
      if (!part.ok()) {
        Fail(rd.meta, WorkerError::kInternal, part.status().message());
        return false;
      }
      grouped->insert(g.begin(), g.end());
      rpc::TensorMessage header;
      AddressMessage(rd, &header);
      for (int64_t v : part->shape) header.add_shape(v);
      EncodeTensor(*part, d.plan.wire, &header);
      QueueSends(
          rd.dep, rd.meta,
          RelayHops(d.plan, g, d.device, rd.meta.seq, d.plan.broadcast.fanout),
          std::move(header), /*readdress_only=*/false);
    }
    return true;
  }

  // Every other outgoing transfer of the task: delivered here when its
  // reader runs on this device, queued for the senders otherwise.
  void SendOutputs(const Ready& rd,
                   const std::map<std::string, const Tensor*>& srcs,
                   const std::set<int>& grouped) {
    const Deployment& d = *rd.dep;
    const Task& t = d.plan.tasks[rd.task];
    for (int xi : d.outgoing[rd.task]) {
      if (grouped.count(xi)) continue;
      const Transfer& x = d.plan.transfers[xi];
      auto part = ExtractRegion(*srcs.at(x.src.tensor), x.src.region);
      if (!part.ok()) {
        Fail(rd.meta, WorkerError::kInternal, part.status().message());
        return;
      }
      const int to = x.dst.task == kModelOutput
                         ? -1
                         : d.plan.DeviceOf(x.dst.task, rd.meta.seq);
      if (to == d.device) {
        Status s;
        {
          std::lock_guard<std::mutex> lock(mu);
          s = DeliverLocked(rd.dep, rd.meta, xi, *part);
        }
        if (!s.ok()) {  // the request fails now, not at its deadline
          Fail(rd.meta, WorkerError::kMessageRefused,
               "task " + t.name + " on " + opts.name +
                   " could not pass on its output: " + s.message());
          return;
        }
        continue;
      }
      Outgoing o;
      o.dep = rd.dep;
      o.meta = rd.meta;
      o.dst_device = to;
      o.queued = Clock::now();
      AddressMessage(rd, &o.msg);
      o.msg.set_transfer(xi);
      for (int64_t v : part->shape) o.msg.add_shape(v);
      EncodeTensor(*part, d.plan.wire, &o.msg);
      std::lock_guard<std::mutex> lock(out_mu);
      unsent++;
      out_queue.push_back(std::move(o));
      out_cv.notify_one();
    }
  }

  void SenderLoop() {
    while (true) {
      Outgoing o;
      {
        std::unique_lock<std::mutex> lock(out_mu);
        out_cv.wait(lock, [&] { return stopping || !out_queue.empty(); });
        if (stopping) return;
        o = std::move(out_queue.front());
        out_queue.pop_front();
      }
      try {
        SendOne(o);
      } catch (const std::exception& e) {
        Fail(o.meta, WorkerError::kInternal,
             "sending a tensor from " + opts.name +
                 " failed on an unexpected condition: " + e.what());
      }
    }
  }

  // Sends one queued message (through the link shaper) and records it.
  void SendOne(Outgoing& o) {
    struct Sent {  // however this message ends
      std::atomic<int>& n;
      ~Sent() { n--; }
    } sent{unsent};
    const auto taken = Clock::now();
    const Deployment& d = *o.dep;
    const int64_t bytes = o.msg.data().size();
    const int to_device =
        o.dst_device < 0 ? d.plan.output_device : o.dst_device;
    const bool remote = to_device != d.device;
    if (remote) shaper.Transmit(bytes);
    const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                             o.meta.expiry - Clock::now())
                             .count();
    if (left <= 0) {
      Fail(o.meta, WorkerError::kRequestExpired,
           "request " + o.meta.id + " expired on " + opts.name);
      return;
    }
    o.msg.set_timeout_ms(left);
    // Counted when the send starts, not when it returns: the receiver
    // may finish the request (and a client reset the statistics) before
    // this thread runs again, and the bytes would land in the next window.
    if (remote) {
      std::lock_guard<std::mutex> lock(mu);
      stats.AddSent(bytes);
    }
    std::shared_ptr<rpc::Worker::Stub> reply;
    if (o.dst_device < 0) reply = ReplyStub(o.meta.reply_to);
    rpc::Worker::Stub* stub =
        o.dst_device < 0 ? reply.get() : d.stubs[o.dst_device].get();
    (o.dst_device < 0 ? d.sent_to_coordinator : d.sent_to[o.dst_device])
        ->Increment(bytes);
    grpc::Status s = SendTensor(stub, o.msg, left);
    if (!s.ok()) {
      const std::string who =
          o.dst_device < 0 ? "the coordinator (" + o.meta.reply_to + ")"
                           : "device " + d.plan.devices[o.dst_device].name +
                                 " (" + d.peers[o.dst_device] + ")";
      Fail(o.meta, WorkerError::kSendFailed,
           who + " did not take a tensor from " + opts.name + ": " +
               s.error_message());
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    if (o.dep == dep) {
      stats.AddSpan(o.meta.seq, -1, o.msg.transfer(), o.queued, taken,
                    Clock::now());
    }
  }

  // GET /metrics: the counters as they stand, and the gauges read now.
  HttpReply MetricsPage() {
    WorkerGauges g;
    g.send_queue = unsent.load();
    g.memory_budget_bytes = opts.memory_bytes;
    {
      std::lock_guard<std::mutex> lock(mu);
      g.ready_tasks = static_cast<int64_t>(ready.size());
      g.requests_in_flight = static_cast<int64_t>(requests.size());
      g.mailbox_bytes = mailbox_bytes;
      for (const auto* d : {dep.get(), prev.get()}) {
        if (d == nullptr) continue;
        g.weight_bytes += d->weight_bytes;
        g.activation_bytes += d->activation_bytes;
      }
    }
    HttpReply r;
    r.content_type = kExpositionContentType;
    r.body = metrics.Scrape(g);
    return r;
  }

  void Stop() {
    metrics_http.reset();  // its pages read what is stopped below
    {
      std::lock_guard<std::mutex> a(mu);
      std::lock_guard<std::mutex> b(out_mu);
      if (stopping) return;
      stopping = true;
    }
    ready_cv.notify_all();
    out_cv.notify_all();
    if (server) server->Shutdown(DeadlineIn(500));
    if (compute_thread.joinable()) compute_thread.join();
    for (auto& t : senders) t.join();
    senders.clear();
    std::unique_lock<std::mutex> lock(handlers_mu);
    handlers_cv.wait(lock, [&] { return handlers == 0; });
  }
};

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() { impl_->Stop(); }

namespace {

void StartThreads(Worker::Impl* p) {
  p->compute_thread = std::thread([p] { p->ComputeLoop(); });
  for (int i = 0; i < kSenderThreads; ++i) {
    p->senders.emplace_back([p] { p->SenderLoop(); });
  }
}

}  // namespace

StatusOr<std::unique_ptr<Worker>> Worker::StartInProcess(
    const WorkerOptions& opts) {
  auto impl = std::make_unique<Impl>(opts);
  ASSIGN_OR_RETURN(impl->cache, BlobCache::Open(opts.cache_dir));
  StartThreads(impl.get());
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
  ConfigureServer(&b, impl->max_msg);
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
    auto http = HttpServer::Start(
        opts.metrics_listen, "worker " + opts.name + " --metrics",
        {{"/metrics", [p] { return p->MetricsPage(); }}});
    if (!http.ok()) {
      impl->Stop();
      return http.status();
    }
    impl->metrics_http = std::move(http).value();
  }
  StartThreads(p);
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
