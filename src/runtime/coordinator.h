// The coordinator: the client of a cluster of workers. It deploys a Plan
// (weights only where a worker lacks them), then for each request sends the
// model input to the tasks that read it and gathers the model output, which
// the workers send to its own small gRPC endpoint. Run() may be called from
// several threads at once: that is how requests overlap (pipelining).
#ifndef SHOAL_RUNTIME_COORDINATOR_H_
#define SHOAL_RUNTIME_COORDINATOR_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "graph/weights.h"
#include "io/pixels.h"
#include "plan/plan.h"
#include "plan/run_stats.h"
#include "plan/trace.h"
#include "security/tls_identity.h"

namespace shoal {

struct CoordinatorOptions {
  int64_t timeout_ms = 30000;  // per request
  int64_t deploy_timeout_ms = 600000;
  // Where workers reach us, HOST[:PORT] (util/net_address.h); empty:
  // the local address of our route to the first device, any free port.
  std::string advertise;
  int64_t max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  // Deploy keeps each worker's previous deployment serving its requests in
  // flight until Release (`shoal serve` switching plans).
  bool keep_previous = false;
  // Inputs are images normalised this way (io/pixels.h): each part of one
  // that is exactly pixels travels as pixels, a quarter of the bytes
  // (runtime/pixel_codec.h); anything else as float32.
  std::optional<ImageNormalization> pixels;
  // Mutual TLS to the workers and on the reply endpoint (docs/security.md);
  // null: the cluster's `tls` block, loaded by Create, or plaintext.
  std::shared_ptr<const TlsIdentity> tls;
  // Called as Deploy uploads weights the workers lack (from the deploying
  // threads, one per device): `more_total` bytes found missing on
  // `device`, then `sent` more bytes sent to it. For a progress bar.
  std::function<void(const std::string& device, int64_t more_total,
                     int64_t sent)>
      upload_progress;
};

struct DeployReport {
  // Per plan device. Not vector<bool>: each device's deploy thread writes
  // its own entry, and vector<bool> packs neighbours into one word (a data
  // race ThreadSanitizer found).
  std::vector<char> reused;
  std::vector<int64_t> uploaded_bytes;    // weight bytes actually sent
  std::vector<int64_t> weight_bytes;      // what the device holds
  std::vector<int64_t> activation_bytes;  // its largest task's activations
  double ms = 0;
};

// What one worker reports (proto StatsReply, as plain data).
struct DeviceStats {
  std::string name;
  std::vector<std::vector<float>> task_compute_ms;  // per task of the plan
  double wait_ms = 0;
  int64_t bytes_sent = 0, bytes_received = 0;
  std::vector<int64_t> queue_histogram;
  double busy_ms = 0, elapsed_ms = 0;
  int64_t requests_failed = 0;
  // An emulated board: tasks and messages the host finished after the
  // board's time for them, and by how much in all (board time, ms).
  int64_t messages_received = 0;
  int64_t board_late_tasks = 0, board_late_messages = 0;
  double board_late_task_ms = 0, board_late_message_ms = 0;
  // Spans recorded since the last reset (Stats(..., timeline=true)), moved
  // to this process's steady clock (seconds) by the worker's clock offset.
  std::vector<TraceSpan> timeline;
  int64_t timeline_dropped = 0;
  // Stats(..., skip_lost): why this device has no statistics; "" if it has.
  std::string error;
};

class Coordinator {
 public:
  static StatusOr<std::unique_ptr<Coordinator>> Create(
      const Plan& plan, const Cluster& cluster, const CoordinatorOptions& opts);
  ~Coordinator();

  // Checks that every device answers and speaks this protocol version.
  Status CheckHealth();
  // Deploys the plan where it is not deployed yet.
  Status Deploy(const WeightStore& model_weights, DeployReport* report);
  // Deploys it again to these plan devices alone, replacing what they hold
  // (a previous plan kept alongside included): a device that restarted or
  // was given another plan since serves this one again.
  Status Redeploy(const WeightStore& model_weights,
                  const std::vector<int>& devices);
  // Per plan device, the deployment id its Health reply names while it
  // holds this coordinator's deployment ("" before Deploy).
  const std::vector<std::string>& deployment_ids() const;
  // The time dilation of an emulated cluster (its workers' --dilation,
  // known after Deploy; 1 otherwise): Run's deadlines are stretched by it,
  // and the times Run and Stats report are divided by it, in board time.
  // A caller's own clock readings are to be divided by it too.
  double dilation() const;
  // One inference. `seq` picks replicas round robin; `stats` (optional)
  // gets the plan's communication and the latency. `timeout_ms` > 0
  // overrides the options' deadline for this request.
  Status Run(const Tensor& input, Tensor* output, RunStats* stats, int64_t seq,
             int64_t timeout_ms = 0);
  // With `timeline`, each worker's spans too, their times moved onto this
  // process's steady clock by an offset taken from the quickest of a few
  // round trips (taken as 0 where zero is within half the quickest round
  // trip, as on one host).
  // With `skip_lost`, a device that does not answer is listed with its
  // `error` instead of failing the call.
  StatusOr<std::vector<DeviceStats>> Stats(bool reset, bool timeline = false,
                                           bool skip_lost = false);
  // Drops this plan from every worker that holds it (best effort: a device
  // that does not answer is skipped); the first error, if any.
  Status Release();
  // Fails every request waiting here, and every later Run, with `why`.
  void Cancel(const Status& why);

  const Plan& plan() const;
  // The cluster device serving each plan device.
  const std::vector<DeviceSpec>& devices() const;
  // HOST:PORT the workers send outputs to.
  const std::string& reply_address() const;

  struct Impl;

 private:
  explicit Coordinator(std::unique_ptr<Impl> impl);
  Status DeployTo(const WeightStore& weights, const std::vector<int>& devices,
                  bool keep_previous, DeployReport* report);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_COORDINATOR_H_
