// A worker's tensor RPCs: a message checked against the deployment it
// names and handed to the scheduler's mailboxes, a request's abort, and
// the coordinator's reachability check.

#include "metrics/http_server.h"
#include "metrics/worker_metrics.h"
#include "plan/broadcast.h"
#include "runtime/board_clock.h"
#include "runtime/chunk_assembler.h"
#include "runtime/cpu_pacer.h"
#include "runtime/deployment.h"
#include "runtime/deployment_slots.h"
#include "runtime/peer_auth.h"
#include "runtime/relay_messages.h"
#include "runtime/rpc_guard.h"
#include "runtime/task_scheduler.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"
#include "runtime/worker_core.h"
#include "runtime/worker_impl.h"
#include "runtime/worker_sender.h"
#include "runtime/worker_stats.h"
#include "util/clock.h"

namespace shoal {

grpc::Status Worker::Impl::CheckTransfer(const Deployment& d,
                                         const rpc::TensorMessage& m,
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

grpc::Status Worker::Impl::Send(grpc::ServerContext* ctx,
                                const rpc::TensorMessage* m, rpc::Ack*) {
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
    RequestMeta meta{m->request(), m->seq(), m->reply_to(),
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
    Clock::time_point arrived{};  // now
    if (from != d->device) {
      // An emulated board's CPU to receive it, from when it came in, or
      // from when the sending board's CPU was done with it where the
      // sender stamped that on this host's clock (worker_sender.cc): the
      // time it arrived on the board's clock (task_scheduler.h).
      const auto start = BoardArrival(*m, received);
      const double cpu_s =
          opts.board == nullptr
              ? 0.0
              : opts.dilation *
                    BoardMessageSeconds(
                        ScaleRates(opts.board->rates, opts.board_speed),
                        m->data().size());
      if (cpu_s > 0 || start > received) {
        const auto until = start + SteadySeconds(cpu_s);
        if (PaceTo(until, 0)) {
          if (opts.board != nullptr) arrived = until;
        } else if (opts.board != nullptr) {
          const double late_ms = MsSince(until);
          stats.With([&](WorkerStats& s) { s.AddBoardLateMessage(late_ms); });
        }
      }
    }
    Status s = scheduler.Deliver(d, meta, local, *part, arrived);
    return s.ok() ? grpc::Status::OK : ToGrpc(s.WithContext(Who()));
  });
  return Counted(WorkerError::kMessageRefused, st);
}

grpc::Status Worker::Impl::Abort(grpc::ServerContext* ctx,
                                 const rpc::AbortMessage* m, rpc::Ack*) {
  const HandlerScope in_flight(this);
  return GuardRpc(Who(), "Abort", [&]() -> grpc::Status {
    if (auto s = FromMember(ctx, "Abort"); !s.ok()) return s;
    if (auto s = CheckProtocol(m->protocol(), Who()); !s.ok()) return s;
    chunks.Drop(m->request());
    scheduler.Drop(m->request());
    return grpc::Status::OK;
  });
}

grpc::Status Worker::Impl::Sink(grpc::ServerContext* ctx,
                                const rpc::SinkMessage* m, rpc::Ack*) {
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

}  // namespace shoal
