// A worker's Health, blob and deployment RPCs: the weights it lacks
// uploaded into its blob cache, a plan checked and built into a
// deployment, installed beside or instead of the one it holds, released.
#include <functional>
#include <mutex>

#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "runtime/blob_cache.h"
#include "runtime/blob_upload.h"
#include "runtime/chunk_assembler.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/rpc_guard.h"
#include "runtime/task_scheduler.h"
#include "runtime/wire.h"
#include "runtime/worker_core.h"
#include "runtime/worker_impl.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"
#include "util/clock.h"

namespace shoal {

grpc::Status Worker::Impl::Health(grpc::ServerContext* ctx,
                                  const rpc::HealthRequest* req,
                                  rpc::HealthReply* rep) {
  const HandlerScope in_flight(this);
  return GuardRpc(Who(), "Health", [&]() -> grpc::Status {
    if (auto s = FromCoordinator(ctx, "Health"); !s.ok()) return s;
    // Health answers any version, so a coordinator can say what mismatched.
    rep->set_protocol(kProtocolVersion);
    rep->set_name(opts.name);
    // A board that swaps takes any deployment, paying for it in time.
    rep->set_memory_budget(opts.swap != nullptr ? 0 : opts.memory_bytes);
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

grpc::Status Worker::Impl::HaveBlobs(grpc::ServerContext* ctx,
                                     const rpc::HaveBlobsRequest* req,
                                     rpc::HaveBlobsReply* rep) {
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

grpc::Status Worker::Impl::PutBlobs(grpc::ServerContext* ctx,
                                    grpc::ServerReader<rpc::BlobChunk>* reader,
                                    rpc::PutBlobsReply* rep) {
  const HandlerScope in_flight(this);
  if (auto s = FromCoordinator(ctx, "PutBlobs"); !s.ok()) {
    return Counted(WorkerError::kDeployRefused, s);
  }
  return Counted(
      WorkerError::kDeployRefused,
      ReceiveBlobs([reader](rpc::BlobChunk* c) { return reader->Read(c); },
                   rep));
}

grpc::Status Worker::Impl::ReceiveBlobs(
    const std::function<bool(rpc::BlobChunk*)>& next, rpc::PutBlobsReply* rep) {
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

void Worker::Impl::PruneBlobs() {
  deployments.PruneBlobs(cache.get(), opts.cache_max_bytes);
}

StatusOr<std::shared_ptr<Deployment>> Worker::Impl::Build(
    const rpc::DeployRequest& req, rpc::DeployReply* rep, int64_t held) {
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
  ctx.swap = opts.swap;
  ctx.dial = [this](const std::string& addr) {
    return Dial(addr, TlsRole::kDevice);
  };
  ctx.connect_now = !opts.channel;
  return BuildDeployment(req, ctx, held, rep);
}

grpc::Status Worker::Impl::Deploy(grpc::ServerContext* ctx,
                                  const rpc::DeployRequest* req,
                                  rpc::DeployReply* rep) {
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
    // What is held stays in memory while the new one is built: the
    // deployment it replaces too, until Install.
    auto d = Build(*req, rep, HeldBytes());
    if (!d.ok() && d.status().code() == Code::kResourceExhausted &&
        !req->keep_previous() && deployments.current() != nullptr) {
      // Over only beside the plan it replaces: that one goes first.
      DropDeployments();
      d = Build(*req, rep, HeldBytes());
    }
    if (!d.ok()) return ToGrpc(d.status().WithContext(Who()));
    Install(std::move(d).value(), req->keep_previous());
    return grpc::Status::OK;
  });
  return Counted(WorkerError::kDeployRefused, st);
}

int64_t Worker::Impl::HeldBytes() {
  std::lock_guard<std::mutex> lock(profiling_mu);
  return deployments.Bytes() + profiling_bytes;
}

void Worker::Impl::Install(std::shared_ptr<Deployment> d, bool keep_previous) {
  const bool keep = keep_previous && deployments.current() != nullptr;
  std::vector<RequestMeta> dropped;
  if (!keep) dropped = scheduler.DropAll();
  metrics.Deployed(d->plan_id, d->tasks_here);
  deployments.Install(std::move(d), keep);
  stats.With([](WorkerStats& s) { s.ForgetTasks(); });
  PruneBlobs();
  AbortDropped(dropped);
}

void Worker::Impl::DropDeployments() {
  const std::vector<RequestMeta> dropped = scheduler.DropAll();
  deployments.Clear();
  metrics.PlanNow("", 0);
  stats.With([](WorkerStats& s) { s.ForgetTasks(); });
  AbortDropped(dropped);
}

void Worker::Impl::AbortDropped(const std::vector<RequestMeta>& dropped) {
  for (const auto& meta : dropped) {
    chunks.Drop(meta.id);
    sender.SendAbort(meta, "request " + meta.id + " was dropped: " + opts.name +
                               " was given another plan");
  }
}

grpc::Status Worker::Impl::Release(grpc::ServerContext* ctx,
                                   const rpc::ReleaseRequest* req,
                                   rpc::ReleaseReply* rep) {
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

}  // namespace shoal
