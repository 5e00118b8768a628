// The worker daemon: a gRPC service that knows nothing about models until a
// coordinator deploys its part of a Plan (task fragments plus weight blobs,
// cached by content hash). It then receives input regions, runs each task
// once all its inputs have arrived, and sends the outputs straight to the
// workers that consume them (or, for the model output, to the coordinator
// named in the request). Many requests may be in flight at once.
#ifndef SHOAL_RUNTIME_WORKER_H_
#define SHOAL_RUNTIME_WORKER_H_

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/swap.h"
#include "engine/executor.h"
#include "runtime/link_shaper.h"
#include "runtime/wire.h"
#include "security/tls_identity.h"
#include "shoal.grpc.pb.h"
#include "util/status.h"

namespace shoal {

struct WorkerOptions {
  std::string listen = "127.0.0.1:0";  // port 0: any free port
  std::string name = "worker";
  int64_t memory_bytes = 0;  // budget for a deployment; 0: unlimited
  int threads = 1;           // kernel threads
  Link link;                 // emulated link applied to what it sends
  // Emulated shared radio channel its sends also take (cluster up with
  // `network: {medium: shared}`); null: none.
  std::shared_ptr<SharedMedium> medium;
  // Emulated CPU speed in host cores (0: off): a task that used c seconds
  // of CPU takes c / cpu_fraction (runtime/cpu_pacer.h).
  double cpu_fraction = 0;
  // Emulated board (`--board`, cluster/board.h): each task is held until
  // its class's time for the task at `board_speed` has passed, times
  // `dilation`; null: none (cpu_fraction, if any, paces). The link above
  // and the medium are already stretched by `dilation` (worker_cmd.cc):
  // an emulated cluster whose boards the host cannot all run in real time
  // runs K times slower, every part of it alike (docs/cluster-format.md).
  const BoardClass* board = nullptr;
  double board_speed = 1;
  // A board that swaps (`--swap-as`, cluster/swap.h): a deployment larger
  // than memory_bytes as that board's framework holds it runs, and each
  // task is held its share of the paging longer (times `dilation`); null:
  // a deployment is held as this worker holds it, and refused if too big.
  const FrameworkMemory* swap = nullptr;
  double dilation = 1;
  int64_t max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  // How long a connection may carry no call, and live (then its calls get
  // the grace): runtime/wire.h, ServerLimits. Tests shorten them.
  int idle_connection_ms = kWorkerIdleConnectionMs;
  int connection_age_ms = kWorkerConnectionAgeMs;
  int connection_grace_ms = kWorkerConnectionGraceMs;
  Backend backend = kDefaultBackend;
  // Where weight blobs are kept between deployments (runtime/blob_cache.h);
  // "": a temporary directory removed at shutdown.
  std::string cache_dir;
  // Blobs no deployment holds are removed, least recently used first,
  // beyond this many bytes in the directory.
  int64_t cache_max_bytes = int64_t{4} << 30;
  // Mutual TLS (docs/security.md): only callers with a certificate of the
  // cluster CA connect; only a coordinator's may deploy, release, read or
  // reset statistics, profile or probe. Null: plaintext, anyone may.
  std::shared_ptr<const TlsIdentity> tls;
  // HOST:PORT of the Prometheus endpoint (GET /metrics, docs/serve.md);
  // "": none. Port 0: any free port (Worker::metrics_port()).
  std::string metrics_listen;
  // In-process use (Worker::StartInProcess: fuzzing, tests): every call the
  // worker makes, to peers, reply addresses and probe targets alike, goes
  // over this channel whatever address it names, and peers are not dialled
  // ahead at deploy. Null: each address is dialled.
  std::shared_ptr<grpc::Channel> channel;
};

class Worker {
 public:
  // Binds and starts serving; fails if the address cannot be bound.
  static StatusOr<std::unique_ptr<Worker>> Start(const WorkerOptions& opts);
  // The same worker, its compute and sender threads running, but no server:
  // its RPC handlers are called through service() (src/runtime/worker_fuzz.cc
  // feeds them requests without a socket). `listen` is not used.
  static StatusOr<std::unique_ptr<Worker>> StartInProcess(
      const WorkerOptions& opts);
  ~Worker();  // stops serving

  int port() const;
  int metrics_port() const;  // 0: no metrics endpoint
  // Blocks until Shutdown() (from another thread or a signal handler's
  // helper thread).
  void Wait();
  void Shutdown();

  // The RPC handlers, to call in-process. A default grpc::ServerContext is
  // a caller without a certificate (accepted only without TLS).
  rpc::Worker::Service* service();
  // PutBlobs' handler over chunks in memory (gRPC's ServerReader cannot be
  // made outside a server).
  grpc::Status PutBlobs(const std::vector<rpc::BlobChunk>& chunks,
                        rpc::PutBlobsReply* rep);

  struct Impl;

 private:
  explicit Worker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WORKER_H_
