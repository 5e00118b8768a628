#include "runtime/worker.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "runtime/blob_cache.h"
#include "runtime/chunk_assembler.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/link_shaper.h"
#include "runtime/peer_auth.h"
#include "runtime/task_scheduler.h"
#include "runtime/wire.h"
#include "runtime/worker_core.h"
#include "runtime/worker_impl.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"

namespace shoal {

int64_t Worker::Impl::ServerQuota() const {
  if (opts.memory_bytes <= 0) return 0;
  return std::max(opts.memory_bytes / 4, 2 * kMinMaxMessageBytes);
}

WorkerCore Worker::Impl::Core() {
  WorkerCore c;
  c.opts = &opts;
  c.metrics = &metrics;
  c.stats = &stats;
  c.deployments = &deployments;
  c.fail = [this](const RequestMeta& meta, WorkerError kind,
                  const std::string& error) { Fail(meta, kind, error); };
  return c;
}

std::shared_ptr<grpc::Channel> Worker::Impl::Dial(const std::string& addr,
                                                  TlsRole role) const {
  if (opts.channel) return opts.channel;
  return MakeChannel(
      addr, max_msg, opts.tls.get(), role,
      role == TlsRole::kDevice ? kPeerKeepaliveTimeoutMs : kKeepaliveTimeoutMs);
}

grpc::Status Worker::Impl::FromCoordinator(const grpc::ServerContext* ctx,
                                           const char* rpc) {
  return CountRefusal(
      RequireRole(*ctx, opts.tls.get(), TlsRole::kCoordinator, Who(), rpc));
}

grpc::Status Worker::Impl::FromMember(const grpc::ServerContext* ctx,
                                      const char* rpc) {
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

grpc::Status Worker::Impl::CountRefusal(grpc::Status s) {
  if (!s.ok()) metrics.Error(WorkerError::kUnauthorized);
  return s;
}

grpc::Status Worker::Impl::Counted(WorkerError kind, grpc::Status s) {
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

void Worker::Impl::Fail(const RequestMeta& meta, WorkerError kind,
                        const std::string& error) {
  metrics.Error(kind);
  stats.With([](WorkerStats& s) { s.AddFailed(); });
  scheduler.Drop(meta.id);
  chunks.Drop(meta.id);
  sender.SendAbort(meta, error);
}

void Worker::Impl::Start() {
  scheduler.Start();
  sender.Start();
}

void Worker::Impl::StartTrimmer() {
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

void Worker::Impl::Stop() {
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
