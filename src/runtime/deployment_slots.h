// The deployments a worker holds: the current one, and the one before it
// while its requests drain (DeployRequest.keep_previous) until Release or
// the next Deploy. Behind a lock of its own: a message finds its deployment
// here without waiting for the scheduler or for a deploy being built.
#ifndef SHOAL_RUNTIME_DEPLOYMENT_SLOTS_H_
#define SHOAL_RUNTIME_DEPLOYMENT_SLOTS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "metrics/worker_metrics.h"
#include "runtime/blob_cache.h"
#include "runtime/deployment.h"
#include "util/status.h"

namespace shoal {

class DeploymentSlots {
 public:
  std::shared_ptr<Deployment> current() const;
  bool IsCurrent(const Deployment* d) const;

  // The deployment of plan `plan_id`, current or previous, for a message
  // of it; `who` names this worker in the error.
  StatusOr<std::shared_ptr<Deployment>> ForPlan(const std::string& plan_id,
                                                const std::string& who) const;

  // Whether a held deployment's plan has a device called `name`: with TLS,
  // the one thing a device certificate entitles its holder to is talking
  // to the devices of the plans it is in.
  bool NamesDevice(const std::string& name) const;

  // The current deployment when its id is `id` (a redeploy of the same
  // plan), dropping the previous one unless `keep_previous`; null
  // otherwise.
  std::shared_ptr<Deployment> Reuse(const std::string& id, bool keep_previous);
  // Weight and activation bytes of every deployment held now (the current
  // one and the one kept alongside it): all of them stay in memory while a
  // new deployment is built or a graph profiled.
  int64_t Bytes() const;
  // `d` becomes current; the current one becomes the previous (with
  // keep_previous) or goes.
  void Install(std::shared_ptr<Deployment> d, bool keep_previous);
  // Drops every deployment held (their requests in flight keep theirs
  // until they finish).
  void Clear();
  // Drops plan `plan_id`. Where it was current, the previous one is
  // current again (a switch that failed on another device is undone this
  // way) and *current_changed is set. False when neither held the plan.
  bool Release(const std::string& plan_id, bool* current_changed);

  // Keeps the blobs of the deployments held, and others up to `max_bytes`
  // of the cache: a redeploy of the same weights is free, and the disk
  // does not fill with every plan.
  void PruneBlobs(BlobCache* cache, int64_t max_bytes) const;
  // Adds the held deployments' weight and activation bytes to `g`.
  void AddBytes(WorkerGauges* g) const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<Deployment> dep_, prev_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_DEPLOYMENT_SLOTS_H_
