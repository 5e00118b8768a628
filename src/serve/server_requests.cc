// The Inference service and the HTTP API's one request path: a request
// counted on the current generation, run with retries on a newer plan
// when a device fails, and its latency recorded in board time.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "metrics/http_server.h"
#include "runtime/peer_auth.h"
#include "runtime/rpc_guard.h"
#include "runtime/wire.h"
#include "serve/generation.h"
#include "serve/latency_history.h"
#include "serve/monitor.h"
#include "serve/serve_metrics.h"
#include "serve/server_impl.h"
#include "util/clock.h"

namespace shoal {

std::shared_ptr<Generation> Server::Impl::Acquire(Clock::time_point expiry,
                                                  Status* why) {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait_until(lock, expiry, [&] { return stopping || !paused; });
  if (stopping) {
    *why = Unavailable("shoal serve is shutting down");
    return nullptr;
  }
  if (paused) {
    *why = Status(Code::kDeadlineExceeded,
                  "the request's deadline passed while the server switched "
                  "plans");
    return nullptr;
  }
  if (!current) {
    *why = Unavailable("no plan is deployed (no device of " + DeviceSource() +
                       " answers)");
    return nullptr;
  }
  current->Enter();
  return current;
}

StatusOr<Tensor> Server::Impl::InputOf(const rpc::InferRequest& req) {
  const Shape& want = model.graph.tensors.at(model.graph.inputs[0]).shape;
  Shape shape(req.shape().begin(), req.shape().end());
  if (shape != want) {
    return InvalidArgument("input has shape " + ShapeToString(shape) +
                           " but model " + opts.model.spec + " expects " +
                           ShapeToString(want));
  }
  auto x = TensorFromBytes(shape, req.data());
  if (!x.ok()) return x.status().WithContext("input");
  return x;
}

Clock::time_point Server::Impl::ExpiryOf(const grpc::ServerContext& ctx,
                                         Clock::time_point t0) {
  int64_t budget = opts.timeout_ms;
  const auto client = ctx.deadline();
  if (client < std::chrono::system_clock::now() + std::chrono::hours(24)) {
    budget = std::min<int64_t>(
        budget, std::chrono::duration_cast<std::chrono::milliseconds>(
                    client - std::chrono::system_clock::now())
                    .count());
  }
  return t0 + std::chrono::milliseconds(budget);
}

StatusOr<Server::Impl::Answer> Server::Impl::RunWithRetries(
    const Tensor& x, int64_t seq, Clock::time_point expiry) {
  Status last;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    Status why;
    std::shared_ptr<Generation> g = Acquire(expiry, &why);
    if (!g) return why;
    const int64_t left = MsUntil(expiry);
    if (left <= 0) {
      g->Leave();
      return Status(Code::kDeadlineExceeded,
                    "the request's deadline passed before it ran");
    }
    Tensor out;
    Status s = g->coord().Run(x, &out, nullptr, seq, left);
    g->Leave();
    if (s.ok()) return Answer{std::move(g), std::move(out), attempt};
    last = s.WithContext("generation " + std::to_string(g->id()));
    // A retry that ran on a plan being replaced (the device had not been
    // found gone yet) was cancelled by the switch, which promises a retry
    // on the new plan: a third try, on it, keeps that promise.
    bool superseded = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      superseded = current && current != g;
    }
    const int tries = superseded ? 3 : 2;
    if (attempt >= tries || !Retryable(s) || MsUntil(expiry) <= 0) break;
    if (attempt == 1) {  // requests retried, not retries
      retried++;
      metrics.Retried();
    }
    ServeLogWith(
        LogLevel::kWarn,
        {{"request", seq}, {"generation", g->id()}, {"error", s.message()}},
        "request %lld failed on generation %lld (%s); checking the "
        "devices, "
        "then retrying it",
        static_cast<long long>(seq), static_cast<long long>(g->id()),
        s.message().c_str());
    OnRequestFailure(g);
  }
  return last;
}

StatusOr<Server::Impl::Served> Server::Impl::ServeRequest(
    const std::function<StatusOr<Tensor>()>& input, Clock::time_point t0,
    Clock::time_point expiry, const std::string& client) {
  struct Leaves {
    std::atomic<int64_t>& n;
    ~Leaves() { --n; }
  } leaves{requests_in_flight};
  if (++requests_in_flight > opts.max_in_flight) {
    // Counted, not logged: a flood would fill the log.
    const Status s = ResourceExhausted(
        "shoal serve has " + std::to_string(opts.max_in_flight) +
        " requests in flight, its limit (--max-in-flight): try again later");
    metrics.RequestStarted();
    metrics.RequestEnded(s, 0);
    failed++;
    // Kept for the dashboard (a bounded list): a failed count there has
    // its reason beside it.
    request_errors.Add({{"error", s.message()}, {"client", client}});
    return s;
  }
  accepted++;
  const int64_t seq = next_seq++;
  // However the call ends (an exception caught by GuardRpc or the HTTP
  // server included), it is counted once, by the status it ended with.
  struct Ended {
    ServeMetrics& m;
    Clock::time_point t0;
    Status s = Internal("ended on an unexpected condition");
    ~Ended() { m.RequestEnded(s, MsSince(t0) / 1e3); }
  } ended{metrics, t0};
  metrics.RequestStarted();
  auto fail = [&](const Status& s) {
    ended.s = s;
    failed++;
    nlohmann::json fields = {{"request", seq}, {"error", s.message()}};
    if (!client.empty()) fields["client"] = client;
    request_errors.Add(fields);
    ServeLogWith(LogLevel::kError, fields, "request %lld%s%s failed: %s",
                 static_cast<long long>(seq), client.empty() ? "" : " from ",
                 client.c_str(), s.message().c_str());
    return s;
  };
  auto x = input();
  if (!x.ok()) return fail(x.status());
  auto answer = RunWithRetries(*x, seq, expiry);
  if (!answer.ok()) return fail(answer.status());
  answered++;
  // Board time on a dilated emulated cluster (Coordinator::dilation);
  // the Prometheus histogram keeps this host's time.
  const double ms = MsSince(t0) / answer->generation->coord().dilation();
  ended.s = Status::Ok();
  history.Add(ms);
  {
    std::lock_guard<std::mutex> lock(mu);
    latencies.push_back(ms);
  }
  return Served{std::move(answer).value(), seq, ms};
}

grpc::Status Server::Impl::Infer(grpc::ServerContext* ctx,
                                 const rpc::InferRequest* req,
                                 rpc::InferReply* rep) {
  return GuardRpc(std::string("shoal serve"), "Infer", [&]() -> grpc::Status {
    if (auto s = RequireRole(*ctx, tls.get(), TlsRole::kCoordinator,
                             "shoal serve", "Infer");
        !s.ok()) {
      return s;
    }
    const auto t0 = Clock::now();
    if (auto s = CheckProtocol(req->protocol(), "shoal serve"); !s.ok()) {
      accepted++;
      next_seq++;
      metrics.RequestStarted();
      metrics.RequestEnded(InvalidArgument(s.error_message()), 0);
      failed++;
      return s;
    }
    auto served = ServeRequest([&] { return InputOf(*req); }, t0,
                               ExpiryOf(*ctx, t0), req->client_id());
    if (!served.ok()) return ToGrpc(served.status());
    const Answer& answer = served->answer;
    for (int64_t v : answer.out.shape) rep->add_shape(v);
    TensorToBytes(answer.out, rep->mutable_data());
    rep->set_generation(answer.generation->id());
    rep->set_attempts(answer.attempts);
    rep->set_request(served->seq);
    rep->set_latency_ms(served->ms);
    return grpc::Status::OK;
  });
}

StatusOr<Tensor> Server::Impl::ServeHttp(
    const std::function<StatusOr<Tensor>()>& input, const std::string& client) {
  const auto t0 = Clock::now();
  ASSIGN_OR_RETURN(
      Served served,
      ServeRequest(input, t0, t0 + std::chrono::milliseconds(opts.timeout_ms),
                   client));
  return std::move(served.answer.out);
}

grpc::Status Server::Impl::ServeStatus(grpc::ServerContext* ctx,
                                       const rpc::ServeStatusRequest* req,
                                       rpc::ServeStatusReply* rep) {
  return GuardRpc(
      std::string("shoal serve"), "ServeStatus", [&]() -> grpc::Status {
        if (auto s = RequireRole(*ctx, tls.get(), TlsRole::kCoordinator,
                                 "shoal serve", "ServeStatus");
            !s.ok()) {
          return s;
        }
        if (auto s = CheckProtocol(req->protocol(), "shoal serve"); !s.ok()) {
          return s;
        }
        *rep = Snapshot();
        return grpc::Status::OK;
      });
}

}  // namespace shoal
