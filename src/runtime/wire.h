// What the coordinator and the workers share on the wire: the protocol
// version, tensors as bytes, content hashes, channels with raised message
// limits, gRPC <-> Status, and the emulated link (runtime/link_shaper.h).
#ifndef SHOAL_RUNTIME_WIRE_H_
#define SHOAL_RUNTIME_WIRE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "graph/weights.h"
#include "security/tls_identity.h"
#include "shoal.grpc.pb.h"
#include "util/content_hash.h"
#include "util/status.h"

namespace shoal {

// Bump with any incompatible change of proto/shoal.proto.
constexpr uint32_t kProtocolVersion = 3;
// gRPC's default 4 MiB is too small for one activation of a large layer.
constexpr int64_t kDefaultMaxMessageBytes = int64_t{256} << 20;
// Weights are streamed in chunks of this size.
constexpr int64_t kBlobChunkBytes = int64_t{1} << 20;
// Every channel pings its peer this often, and a ping unanswered this long
// ends the connection: a device that vanished is known lost within about
// their sum. A ping may queue behind the bytes of a large message on a slow
// link, or wait for a loaded host's transport thread, hence a timeout much
// longer than a round trip (1 s dropped live connections of a test process
// on a loaded 2-core host).
constexpr int kKeepaliveTimeMs = 1000;
constexpr int kKeepaliveTimeoutMs = 2500;
// Between workers, where the bulk of a plan's bytes travels, a ping can
// wait behind seconds of queued data: seven devices sending VGG16's conv
// partial sums to one (90 MB into a 62 Mbit/s downlink, 12 s of queue)
// dropped live connections at 2.5 s when the kernel shaped the links. A
// vanished device is still found within seconds by the coordinator's own
// channels (ConnectionWatch), which fails the requests that need it.
constexpr int kPeerKeepaliveTimeoutMs = 30000;

// FAILED_PRECONDITION naming both versions, or OK.
grpc::Status CheckProtocol(uint32_t got, const std::string& who);

// The content hash (util/content_hash.h) of a tensor's shape and data.
std::string HashTensor(const Tensor& t);
std::string HashString(const std::string& s);

void TensorToBytes(const Tensor& t, std::string* out);
// Checks the byte count against the shape.
StatusOr<Tensor> TensorFromBytes(const std::vector<int64_t>& shape,
                                 const std::string& bytes);

// With `tls`, the channel is mutual TLS and the server must show a
// certificate of `server_role` (runtime/peer_auth.h); without, plaintext.
std::shared_ptr<grpc::Channel> MakeChannel(
    const std::string& address, int64_t max_message_bytes,
    const TlsIdentity* tls = nullptr, TlsRole server_role = TlsRole::kDevice,
    int keepalive_timeout_ms = kKeepaliveTimeoutMs);
// What a server gives any peer that reaches it, whoever it is
// (docs/security.md, "Limits on what an input can cost").
struct ServerLimits {
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  // > 0: what gRPC itself may hold for the server's connections (read
  // buffers, messages arriving); past it gRPC closes connections that carry
  // no call, then cancels calls. 0: no quota.
  int64_t memory_quota_bytes = 0;
  // A connection that carries no call this long is closed (a GOAWAY: a
  // client's next call connects again). 0: never.
  int idle_ms = 0;
  // A connection this old is asked to go (a GOAWAY, gRPC adds +-10 %
  // jitter); the calls on it then have `grace_ms` more before it is
  // closed. This is what ends a call a peer keeps open, a message begun and
  // never finished among them. 0: never.
  int age_ms = 0;
  int grace_ms = 0;
  // > 0: the most threads gRPC may run the server's handlers on; a call
  // past it is refused (RESOURCE_EXHAUSTED), not given a thread of its own.
  int max_threads = 0;
};

// The worker's: a peer on the network reaches it. A connection idle for a
// minute is closed; one is asked to go after ten minutes, and its calls get
// ten more, the longest a deployment's upload may take by default
// (CoordinatorOptions::deploy_timeout_ms): so no call lasts more than
// twenty minutes, a half-sent message included.
constexpr int kWorkerIdleConnectionMs = 60 * 1000;
constexpr int kWorkerConnectionAgeMs = 10 * 60 * 1000;
constexpr int kWorkerConnectionGraceMs = 10 * 60 * 1000;
// Handler threads of a worker: room for every peer of a large plan sending
// at once (a reduction of partial sums fans in from each device), and a
// bound on what a peer opening calls can make it start.
constexpr int kWorkerMaxThreads = 1024;

void ConfigureServer(grpc::ServerBuilder* b, const ServerLimits& limits);
// With a message limit only.
void ConfigureServer(grpc::ServerBuilder* b, int64_t max_message_bytes);

Status FromGrpc(const grpc::Status& s, const std::string& context);
// Whether a call that ended `s` is worth asking again, `retries` asked so
// far: any UNAVAILABLE once (a channel backing off from a restarted peer),
// and a GOAWAY, the sign of a peer alive but shedding idle connections,
// again after that.
bool IsRetryableUnavailable(const grpc::Status& s, int retries);
grpc::Status ToGrpc(const Status& s);

std::chrono::system_clock::time_point DeadlineIn(int64_t ms);

// Sends one tensor message within `timeout_ms`. A channel still backing off
// from a peer that was down fails at once; one retry that waits up to a
// second for the connection lets a restarted peer serve again.
grpc::Status SendTensor(rpc::Worker::Stub* stub, const rpc::TensorMessage& m,
                        int64_t timeout_ms);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WIRE_H_
