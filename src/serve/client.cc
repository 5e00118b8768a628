#include "serve/client.h"

#include <chrono>

#include "runtime/peer_auth.h"
#include "runtime/wire.h"

namespace shoal {

ServeClient::ServeClient(const std::string& address, int64_t max_message_bytes,
                         const TlsIdentity* tls)
    : address_(address),
      tls_(tls != nullptr),
      stub_(rpc::Inference::NewStub(MakeChannel(
          address,
          max_message_bytes > 0 ? max_message_bytes : kDefaultMaxMessageBytes,
          tls, TlsRole::kCoordinator))) {}

StatusOr<InferResult> ServeClient::Infer(const Tensor& input,
                                         int64_t timeout_ms,
                                         const std::string& client_id) {
  rpc::InferRequest req;
  req.set_protocol(kProtocolVersion);
  for (int64_t v : input.shape) req.add_shape(v);
  TensorToBytes(input, req.mutable_data());
  req.set_client_id(client_id);
  rpc::InferReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(timeout_ms));
  const auto t0 = std::chrono::steady_clock::now();
  grpc::Status s = stub_->Infer(&ctx, req, &rep);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  if (!s.ok())
    return FromGrpc(s, "shoal serve at " + address_ + TlsHint(s, tls_));
  InferResult r;
  ASSIGN_OR_RETURN(r.output,
                   TensorFromBytes(std::vector<int64_t>(rep.shape().begin(),
                                                        rep.shape().end()),
                                   rep.data()));
  r.generation = rep.generation();
  r.attempts = rep.attempts();
  r.request = rep.request();
  r.server_ms = rep.latency_ms();
  r.latency_ms = ms;
  return r;
}

StatusOr<rpc::ServeStatusReply> ServeClient::GetStatus(int64_t timeout_ms) {
  rpc::ServeStatusRequest req;
  req.set_protocol(kProtocolVersion);
  rpc::ServeStatusReply rep;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(timeout_ms));
  grpc::Status s = stub_->ServeStatus(&ctx, req, &rep);
  if (!s.ok())
    return FromGrpc(s, "shoal serve at " + address_ + TlsHint(s, tls_));
  return rep;
}

}  // namespace shoal
