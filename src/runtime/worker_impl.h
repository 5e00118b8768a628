// The worker's state, shared by the files that implement it: its
// lifecycle and the checks every RPC makes (worker.cc), deployment
// (worker_deploy.cc), tensors (worker_tensors.cc), and what it reports
// (worker_observe.cc). Internal to runtime/: nothing outside includes it.
#ifndef SHOAL_RUNTIME_WORKER_IMPL_H_
#define SHOAL_RUNTIME_WORKER_IMPL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "runtime/blob_cache.h"
#include "runtime/chunk_assembler.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/link_shaper.h"
#include "runtime/task_scheduler.h"
#include "runtime/wire.h"
#include "runtime/worker.h"
#include "runtime/worker_core.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"

namespace shoal {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMaxTimeoutMs = 3600 * 1000;

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
  // Bytes the graphs being profiled now hold (Profile): counted, beside the
  // deployments, against the budget whenever a deployment or another
  // profile asks for memory. Taken after deploy_mu.
  std::mutex profiling_mu;
  int64_t profiling_bytes = 0;
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
  int64_t ServerQuota() const;

  WorkerCore Core();

  std::string Who() const { return "worker " + opts.name; }

  // A channel to `addr`, whose certificate (with TLS) must show `role`.
  // Channels to other devices carry the plan's bulk and wait longer for a
  // ping's answer (kPeerKeepaliveTimeoutMs).
  std::shared_ptr<grpc::Channel> Dial(const std::string& addr,
                                      TlsRole role) const;

  // What a caller's certificate must show for each RPC (docs/security.md).
  // Every refusal counts as unauthorized on shoal_worker_errors_total,
  // whichever RPC it is.
  grpc::Status FromCoordinator(const grpc::ServerContext* ctx, const char* rpc);
  // A coordinator, or a device of a plan deployed here: a certificate of
  // the cluster CA issued to another device (one outside the cluster, or of
  // a plan this worker is not in) gets a refusal and nothing else, not even
  // the id of the plan it might address.
  grpc::Status FromMember(const grpc::ServerContext* ctx, const char* rpc);
  grpc::Status CountRefusal(grpc::Status s);

  // Counts an RPC's failure on shoal_worker_errors_total: a caught
  // exception as internal, any other as `kind`; a refused caller was
  // counted where it was refused.
  grpc::Status Counted(WorkerError kind, grpc::Status s);

  // Tells the coordinator that a request failed here; best effort.
  void Fail(const RequestMeta& meta, WorkerError kind,
            const std::string& error);

  void PruneBlobs();

  // --- Health, blobs, deploy -------------------------------------------

  grpc::Status Health(grpc::ServerContext* ctx, const rpc::HealthRequest* req,
                      rpc::HealthReply* rep) override;

  grpc::Status HaveBlobs(grpc::ServerContext* ctx,
                         const rpc::HaveBlobsRequest* req,
                         rpc::HaveBlobsReply* rep) override;

  grpc::Status PutBlobs(grpc::ServerContext* ctx,
                        grpc::ServerReader<rpc::BlobChunk>* reader,
                        rpc::PutBlobsReply* rep) override;

  // PutBlobs' body: `next` gives the stream's chunks until it returns false.
  grpc::Status ReceiveBlobs(const std::function<bool(rpc::BlobChunk*)>& next,
                            rpc::PutBlobsReply* rep);

  // `held`: bytes already in memory beside this one while it is built
  // (HeldBytes).
  StatusOr<std::shared_ptr<Deployment>> Build(const rpc::DeployRequest& req,
                                              rpc::DeployReply* rep,
                                              int64_t held);

  // Bytes in memory now that a new deployment or profile is built beside:
  // every deployment held and the graphs being profiled.
  int64_t HeldBytes();

  grpc::Status Deploy(grpc::ServerContext* ctx, const rpc::DeployRequest* req,
                      rpc::DeployReply* rep) override;

  // Makes `d` the current deployment. Unless the current one is kept
  // alongside, the requests in flight are dropped and their coordinators
  // told, which would otherwise wait for them until their deadlines.
  void Install(std::shared_ptr<Deployment> d, bool keep_previous);
  // Drops every deployment, and the requests in flight as Install does:
  // a deployment that replaces them but does not fit beside them is built
  // after.
  void DropDeployments();
  // The requests in flight dropped, their coordinators told why.
  void AbortDropped(const std::vector<RequestMeta>& dropped);

  grpc::Status Release(grpc::ServerContext* ctx, const rpc::ReleaseRequest* req,
                       rpc::ReleaseReply* rep) override;

  // --- Tensors ---------------------------------------------------------

  // Checks that message `m` is a transfer of deployment `d` to this device,
  // with the shape the plan gives it.
  grpc::Status CheckTransfer(const Deployment& d, const rpc::TensorMessage& m,
                             std::vector<int64_t>* shape) const;

  grpc::Status Send(grpc::ServerContext* ctx, const rpc::TensorMessage* m,
                    rpc::Ack*) override;

  grpc::Status Abort(grpc::ServerContext* ctx, const rpc::AbortMessage* m,
                     rpc::Ack*) override;

  grpc::Status Stats(grpc::ServerContext* ctx, const rpc::StatsRequest* req,
                     rpc::StatsReply* rep) override;

  // --- Profiling (shoal profile) -----------------------------------------

  grpc::Status Profile(grpc::ServerContext* ctx, const rpc::ProfileRequest* req,
                       rpc::ProfileReply* rep) override;

  grpc::Status ProbeLink(grpc::ServerContext* ctx,
                         const rpc::LinkProbeRequest* req,
                         rpc::LinkProbeReply* rep) override;

  grpc::Status Sink(grpc::ServerContext* ctx, const rpc::SinkMessage* m,
                    rpc::Ack*) override;

  // GET /metrics: the counters as they stand, and the gauges read now.
  HttpReply MetricsPage();

  void Start();

  // Every kTrimEvery, when no RPC handler has run for kQuiet: a trim
  // between requests, not beside one (it takes the heaps' locks).
  void StartTrimmer();

  void Stop();
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WORKER_IMPL_H_
