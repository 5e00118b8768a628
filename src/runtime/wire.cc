#include "runtime/wire.h"

#include <grpcpp/resource_quota.h>

#include <climits>
#include <cstring>

#include "runtime/peer_auth.h"

namespace shoal {

grpc::Status CheckProtocol(uint32_t got, const std::string& who) {
  if (got == kProtocolVersion) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      who + " speaks shoal protocol version " +
                          std::to_string(kProtocolVersion) +
                          " but the request is version " + std::to_string(got) +
                          ": run the same shoal build on every machine");
}

std::string HashTensor(const Tensor& t) {
  ContentHasher h;
  const int64_t rank = static_cast<int64_t>(t.shape.size());
  h.Add(&rank, sizeof(rank));
  h.Add(t.shape.data(), t.shape.size() * sizeof(int64_t));
  h.Add(t.data.data(), t.data.size() * sizeof(float));
  return h.Hex();
}

std::string HashString(const std::string& s) {
  ContentHasher h;
  h.Add(s.data(), s.size());
  return h.Hex();
}

void TensorToBytes(const Tensor& t, std::string* out) {
  out->assign(reinterpret_cast<const char*>(t.data.data()),
              t.data.size() * sizeof(float));
}

StatusOr<Tensor> TensorFromBytes(const std::vector<int64_t>& shape,
                                 const std::string& bytes) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > (int64_t{1} << 31)) {
      return InvalidArgument("bad dimension in a tensor message");
    }
    n *= d;
    if (n > (int64_t{1} << 34)) return InvalidArgument("tensor too large");
  }
  if (static_cast<int64_t>(bytes.size()) != n * 4) {
    return InvalidArgument("tensor message has " +
                           std::to_string(bytes.size()) + " bytes but its " +
                           "shape needs " + std::to_string(n * 4));
  }
  Tensor t(Shape(shape.begin(), shape.end()));
  std::memcpy(t.data.data(), bytes.data(), bytes.size());
  return t;
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           int64_t max_message_bytes,
                                           const TlsIdentity* tls,
                                           TlsRole server_role,
                                           int keepalive_timeout_ms) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  // Reconnect quickly after a worker restarts.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // gRPC core reads this as the least time one connection attempt gets
  // (MIN_CONNECT_TIMEOUT in gRPC's connection-backoff.md), not as a
  // backoff. At 100 ms, a worker held to 1 ms of CPU per 23 ms quota
  // period could not finish the HTTP/2 handshake in time and the call
  // failed with "tcp handshaker shutdown". A refused connection (a worker
  // that is down) still fails at once; the call's deadline still bounds it.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  // Unique per channel: each stub gets its own TCP connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A peer that vanished without closing its connections (host off, out of
  // Wi-Fi range, frozen) is found by an unanswered ping, with or without a
  // call open: the coordinator and senders then fail at once instead of at
  // the request's deadline (docs/architecture.md, "Failures").
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive_timeout_ms);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A connection is dropped only when the peer is gone: gRPC's default
  // idle timeout (30 min without calls) would look like a lost device to
  // the coordinator's connection watch.
  args.SetInt(GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, INT_MAX);
  SetServerRole(&args, tls, server_role);
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(tls), args);
}

void ConfigureServer(grpc::ServerBuilder* b, const ServerLimits& limits) {
  // gRPC sets SO_REUSEPORT by default: a second worker on a taken port would
  // start and share it, silently. Without it the bind fails loudly.
  b->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Accept our channels' keepalive pings (MakeChannel): by default a server
  // answers pings more often than every 5 minutes with a GOAWAY.
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                        kKeepaliveTimeMs / 2);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  b->SetMaxReceiveMessageSize(static_cast<int>(limits.max_message_bytes));
  b->SetMaxSendMessageSize(static_cast<int>(limits.max_message_bytes));
  if (limits.memory_quota_bytes > 0 || limits.max_threads > 0) {
    grpc::ResourceQuota quota("shoal-server");
    if (limits.memory_quota_bytes > 0) {
      quota.Resize(static_cast<size_t>(limits.memory_quota_bytes));
    }
    if (limits.max_threads > 0) quota.SetMaxThreads(limits.max_threads);
    b->SetResourceQuota(quota);
  }
  // A coordinator whose connection is closed this way sees it drop and
  // asks the worker whether it still holds the deployment before it fails
  // a request (Coordinator, DeviceLost).
  if (limits.idle_ms > 0) {
    b->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, limits.idle_ms);
  }
  if (limits.age_ms > 0) {
    b->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, limits.age_ms);
    b->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                          limits.grace_ms);
  }
}

void ConfigureServer(grpc::ServerBuilder* b, int64_t max_message_bytes) {
  ServerLimits l;
  l.max_message_bytes = max_message_bytes;
  ConfigureServer(b, l);
}

bool IsRetryableUnavailable(const grpc::Status& s, int retries) {
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE) return false;
  return retries == 0 || s.error_message().find("GOAWAY") != std::string::npos;
}

Status FromGrpc(const grpc::Status& s, const std::string& context) {
  if (s.ok()) return Status::Ok();
  Code c = Code::kInternal;
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      c = Code::kUnavailable;
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      c = Code::kDeadlineExceeded;
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      c = Code::kResourceExhausted;
      break;
    case grpc::StatusCode::FAILED_PRECONDITION:
    // A certificate without the right role (runtime/peer_auth.h): the
    // caller's set-up, not a fault of the callee.
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      c = Code::kFailedPrecondition;
      break;
    case grpc::StatusCode::INVALID_ARGUMENT:
      c = Code::kInvalidArgument;
      break;
    case grpc::StatusCode::NOT_FOUND:
      c = Code::kNotFound;
      break;
    default:
      break;
  }
  return Status(c, context + ": " + s.error_message());
}

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  grpc::StatusCode c = grpc::StatusCode::INTERNAL;
  switch (s.code()) {
    case Code::kInvalidArgument:
      c = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case Code::kFailedPrecondition:
      c = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case Code::kNotFound:
      c = grpc::StatusCode::NOT_FOUND;
      break;
    case Code::kUnavailable:
      c = grpc::StatusCode::UNAVAILABLE;
      break;
    case Code::kDeadlineExceeded:
      c = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    case Code::kUnsupported:
      c = grpc::StatusCode::UNIMPLEMENTED;
      break;
    case Code::kResourceExhausted:
      c = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    default:
      break;
  }
  return grpc::Status(c, s.message());
}

std::chrono::system_clock::time_point DeadlineIn(int64_t ms) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
}

grpc::Status SendTensor(rpc::Worker::Stub* stub, const rpc::TensorMessage& m,
                        int64_t timeout_ms) {
  const auto end = DeadlineIn(timeout_ms);
  rpc::Ack ack;
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(end);
    s = stub->Send(&ctx, m, &ack);
  }
  if (s.error_code() != grpc::StatusCode::UNAVAILABLE) return s;
  // The first try may have arrived before its connection dropped: the
  // receiver drops a transfer it already has (runtime/mailboxes.h).
  grpc::ClientContext ctx;
  ctx.set_deadline(std::min(end, DeadlineIn(1000)));
  ctx.set_wait_for_ready(true);
  grpc::Status retry = stub->Send(&ctx, m, &ack);
  return retry.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? s : retry;
}

}  // namespace shoal
