// The coordinator's own endpoint (the workers send it the model output,
// aborts and reachability checks), and what it does when a device is lost
// or silent while requests need it.
#include <mutex>

#include "runtime/coordinator_impl.h"
#include "runtime/peer_auth.h"
#include "runtime/rpc_guard.h"
#include "runtime/tensor_codec.h"
#include "runtime/wire.h"

namespace shoal {

// Per device: whether a request whose input is sent runs a task there
// (what the probe asks).
std::vector<bool> Coordinator::Impl::DevicesInUse() {
  std::vector<bool> in_use(devs.size(), false);
  std::lock_guard<std::mutex> lock(mu);
  for (auto& [id, p] : pending) {
    if (!p->awaiting || !p->error.ok()) continue;
    for (size_t d = 0; d < in_use.size(); ++d) {
      if (p->uses[d]) in_use[d] = true;
    }
  }
  return in_use;
}

// The probe found device `d` silent: the requests that run a task there
// fail now. Not asked again whether it holds the deployment, as a
// dropped connection is: it has just not answered.
void Coordinator::Impl::DeviceSilent(int d, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu);
  silent[d] = 1;
  bool any = false;
  for (auto& [id, p] : pending) {
    if (!p->error.ok() || !p->uses[d]) continue;
    p->error = Unavailable(DeviceName(d) + " was lost: " + what);
    any = true;
  }
  if (any) cv.notify_all();
}

// The connection watch lost device `d`: the requests that run a task
// there fail now, not at their deadline. Unless the worker itself closed
// the connection and still holds the deployment: a worker closes
// connections idle for a while, older than a limit, or under memory
// pressure (runtime/wire.h, ServerLimits), and its calls went on or
// connect again.
void Coordinator::Impl::DeviceLost(int d, const std::string& what) {
  auto needed = [&] {
    for (auto& [id, p] : pending) {
      if (p->error.ok() && p->uses[d]) return true;
    }
    return false;
  };
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!needed()) return;
  }
  if (StillHoldsDeployment(d)) return;
  std::lock_guard<std::mutex> lock(mu);
  bool any = false;
  for (auto& [id, p] : pending) {
    if (!p->error.ok() || !p->uses[d]) continue;
    p->error = Unavailable(DeviceName(d) + " was lost: " + what);
    any = true;
  }
  if (any) cv.notify_all();
}

// Whether device `d` answers Health within half a second with the
// deployment it was given: the same process, its state intact (a
// restarted one holds none). A frozen or dead one costs at most that.
bool Coordinator::Impl::StillHoldsDeployment(int d) {
  std::string want;
  {
    std::lock_guard<std::mutex> lock(mu);
    want = deploy_ids[d];
  }
  if (want.empty()) return false;
  rpc::HealthRequest q;
  q.set_protocol(kProtocolVersion);
  rpc::HealthReply r;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(500));
  return stubs[d]->Health(&ctx, q, &r).ok() && r.deployment() == want;
}

grpc::Status Coordinator::Impl::Health(grpc::ServerContext* ctx,
                                       const rpc::HealthRequest*,
                                       rpc::HealthReply* rep) {
  return GuardRpc(
      std::string("the coordinator"), "Health", [&]() -> grpc::Status {
        if (auto s = RequireMember(*ctx, tls(), "the coordinator", "Health");
            !s.ok()) {
          return s;
        }
        rep->set_protocol(kProtocolVersion);
        rep->set_name("coordinator");
        return grpc::Status::OK;
      });
}

// A part of the model output, from a worker.
grpc::Status Coordinator::Impl::Send(grpc::ServerContext* ctx,
                                     const rpc::TensorMessage* m, rpc::Ack*) {
  return GuardRpc(
      std::string("the coordinator"), "Send", [&]() -> grpc::Status {
        if (auto s = RequireRole(*ctx, tls(), TlsRole::kDevice,
                                 "the coordinator", "Send");
            !s.ok()) {
          return s;
        }
        if (auto s = CheckProtocol(m->protocol(), "the coordinator"); !s.ok()) {
          return s;
        }
        const int xi = m->transfer();
        if (xi < 0 || xi >= static_cast<int>(plan.transfers.size()) ||
            plan.transfers[xi].dst.task != kModelOutput) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "not a transfer of the model output");
        }
        const Transfer& x = plan.transfers[xi];
        std::vector<int64_t> shape(m->shape().begin(), m->shape().end());
        if (shape != x.dst.region.extent()) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "model output part has the wrong shape");
        }
        auto part = TensorFromMessage(*m, shape);
        if (!part.ok()) return ToGrpc(part.status());
        std::lock_guard<std::mutex> lock(mu);
        auto it = pending.find(m->request());
        if (it == pending.end()) return grpc::Status::OK;  // timed out already
        PendingRequest& p = *it->second;
        Status s = CopyRegion(*part, Region::Full(part->shape), &p.output,
                              x.dst.region, x.merge);
        if (!s.ok() && p.error.ok()) p.error = s;
        p.parts_left--;
        if (p.done()) cv.notify_all();
        return grpc::Status::OK;
      });
}

// Deploy's reachability check: each worker sends one empty message here.
grpc::Status Coordinator::Impl::Sink(grpc::ServerContext* ctx,
                                     const rpc::SinkMessage* m, rpc::Ack*) {
  return GuardRpc(
      std::string("the coordinator"), "Sink", [&]() -> grpc::Status {
        if (auto s = RequireMember(*ctx, tls(), "the coordinator", "Sink");
            !s.ok()) {
          return s;
        }
        return CheckProtocol(m->protocol(), "the coordinator");
      });
}

grpc::Status Coordinator::Impl::Abort(grpc::ServerContext* ctx,
                                      const rpc::AbortMessage* m, rpc::Ack*) {
  return GuardRpc(
      std::string("the coordinator"), "Abort", [&]() -> grpc::Status {
        if (auto s = RequireRole(*ctx, tls(), TlsRole::kDevice,
                                 "the coordinator", "Abort");
            !s.ok()) {
          return s;
        }
        std::lock_guard<std::mutex> lock(mu);
        auto it = pending.find(m->request());
        if (it != pending.end() && it->second->error.ok()) {
          it->second->error =
              Unavailable("device " + m->device() + " reports: " + m->error());
          cv.notify_all();
        }
        return grpc::Status::OK;
      });
}

std::string Coordinator::Impl::Unreachable() {
  std::string down;
  for (size_t d = 0; d < devs.size(); ++d) {
    rpc::HealthRequest req;
    req.set_protocol(kProtocolVersion);
    rpc::HealthReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(1000));
    grpc::Status s = stubs[d]->Health(&ctx, req, &rep);
    if (!s.ok()) {
      down += (down.empty() ? "" : "; ") + DeviceName(d) +
              " does not answer: " + s.error_message() +
              TlsHint(s, tls() != nullptr);
    }
  }
  return down;
}

}  // namespace shoal
