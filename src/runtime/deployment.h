// One plan as a worker holds it: its tasks' executors with their weights
// read from the blob cache, the transfers in and out of each task, the
// stubs to its peers; built from a Deploy request after checking the plan
// and the device's memory budget.
#ifndef SHOAL_RUNTIME_DEPLOYMENT_H_
#define SHOAL_RUNTIME_DEPLOYMENT_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/board.h"
#include "cluster/swap.h"
#include "engine/executor.h"
#include "metrics/worker_metrics.h"
#include "plan/plan.h"
#include "runtime/blob_cache.h"
#include "shoal.grpc.pb.h"
#include "util/status.h"

namespace shoal {

// One plan, as this worker holds it.
struct Deployment {
  std::string id;
  std::string plan_id;
  Plan plan;
  int device = 0;
  std::vector<std::string> peers;
  std::vector<bool> mine;                       // per task
  std::vector<std::unique_ptr<Executor>> exec;  // per task (null: none)
  // Per task, the emulated board's time for it (DeploymentContext::board;
  // cluster/board.h); empty without a board.
  std::vector<double> board_seconds;
  // Per task, the seconds it pages back in on a board that swaps
  // (DeploymentContext::swap; cluster/swap.h); empty when nothing does.
  std::vector<double> swap_seconds;
  std::vector<int> incoming;               // transfers into each task
  std::vector<std::vector<int>> outgoing;  // transfers out of each task
  std::vector<std::unique_ptr<rpc::Worker::Stub>> stubs;  // per device
  int64_t weight_bytes = 0, activation_bytes = 0;
  std::set<std::string> blob_hashes;  // the cached blobs it reads
  int tasks_here = 0;
  // Metric handles, resolved once here so that the task loop and the
  // senders only add to atomics (metrics/worker_metrics.h).
  std::vector<prometheus::Histogram*> task_seconds;  // per task; null: not mine
  std::vector<prometheus::Counter*> sent_to, received_from;  // per device
  prometheus::Counter* sent_to_coordinator = nullptr;
};

// What building a deployment needs of its worker.
struct DeploymentContext {
  BlobCache* cache = nullptr;
  WorkerMetrics* metrics = nullptr;
  int64_t memory_bytes = 0;  // the worker's budget; 0: unlimited
  Backend backend = kDefaultBackend;
  int threads = 1;
  // An emulated board's rates (WorkerOptions::board): each task's time on
  // it is worked out at deploy.
  bool board = false;
  BoardRates board_rates;
  // A board that swaps what does not fit `memory_bytes` (WorkerOptions::
  // swap): each task's share of the paging is worked out at deploy.
  const FrameworkMemory* swap = nullptr;
  // A channel to a peer's address.
  std::function<std::shared_ptr<grpc::Channel>(const std::string&)> dial;
  // Connect to the devices it sends to before the first request
  // (ConnectToReceivers); off where one channel stands for every peer.
  bool connect_now = true;
};

// Checks the request's plan and that it fits the memory budget beside
// `held` bytes already in memory (the deployments held, graphs being
// profiled: kResourceExhausted when only those are in the way,
// kFailedPrecondition when it does not fit alone),
// then builds the executors a task at a time. Fills the reply's sizes.
StatusOr<std::shared_ptr<Deployment>> BuildDeployment(
    const rpc::DeployRequest& req, const DeploymentContext& ctx, int64_t held,
    rpc::DeployReply* rep);

// Hands the pages of freed blocks back to the system. glibc's malloc keeps
// much of what a worker frees in its heaps (it gives back only a heap's
// top, and raises its mmap threshold as large blocks are freed, so later
// ones come from the heaps too): a worker that built one engine after
// another, for deployments or for profiling, grew by about a model's
// weights every few builds until its memory limit killed it. Called when
// a deployment goes and after each profiling run; the processes also keep
// large blocks out of the heaps (MapLargeAllocations, process_setup.h).
void TrimFreedMemory();

}  // namespace shoal

#endif  // SHOAL_RUNTIME_DEPLOYMENT_H_
