// A client of `shoal serve`'s Inference service: what `shoal infer-remote`
// and the tests use; docs/serve.md shows the same calls from any gRPC client.
#ifndef SHOAL_SERVE_CLIENT_H_
#define SHOAL_SERVE_CLIENT_H_

#include <memory>
#include <string>

#include "graph/weights.h"
#include "security/tls_identity.h"
#include "shoal.grpc.pb.h"
#include "util/status.h"

namespace shoal {

struct InferResult {
  Tensor output;
  int64_t generation = 0;  // the plan that answered
  int attempts = 1;        // 2: retried once after a device failed
  int64_t request = 0;     // the server's request number
  double server_ms = 0;    // time in the server
  double latency_ms = 0;   // seen by this client
};

class ServeClient {
 public:
  // `max_message_bytes` 0: kDefaultMaxMessageBytes. With `tls`, mutual TLS
  // to a server whose certificate has the coordinator role.
  explicit ServeClient(const std::string& address,
                       int64_t max_message_bytes = 0,
                       const TlsIdentity* tls = nullptr);

  // One inference within `timeout_ms` (the gRPC deadline of the call).
  StatusOr<InferResult> Infer(const Tensor& input, int64_t timeout_ms,
                              const std::string& client_id = "");
  StatusOr<rpc::ServeStatusReply> GetStatus(int64_t timeout_ms);

 private:
  std::string address_;
  bool tls_ = false;
  std::unique_ptr<rpc::Inference::Stub> stub_;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_CLIENT_H_
