#include "runtime/deployment_slots.h"

#include <set>
#include <utility>

namespace shoal {

std::shared_ptr<Deployment> DeploymentSlots::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dep_;
}

bool DeploymentSlots::IsCurrent(const Deployment* d) const {
  std::lock_guard<std::mutex> lock(mu_);
  return d != nullptr && d == dep_.get();
}

StatusOr<std::shared_ptr<Deployment>> DeploymentSlots::ForPlan(
    const std::string& plan_id, const std::string& who) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dep_ && !prev_) return FailedPrecondition(who + " has no deployment");
  for (const auto& x : {dep_, prev_}) {
    if (x && x->plan_id == plan_id) return x;
  }
  return FailedPrecondition(who + " holds another plan (" +
                            (dep_ ? dep_->plan_id : prev_->plan_id) +
                            "); deploy the plan again");
}

bool DeploymentSlots::NamesDevice(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& x : {dep_, prev_}) {
    if (!x) continue;
    for (const PlanDevice& d : x->plan.devices) {
      if (d.name == name) return true;
    }
  }
  return false;
}

std::shared_ptr<Deployment> DeploymentSlots::Reuse(const std::string& id,
                                                   bool keep_previous) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dep_ || dep_->id != id) return nullptr;
  if (!keep_previous) prev_.reset();
  return dep_;
}

int64_t DeploymentSlots::Bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (const auto* d : {dep_.get(), prev_.get()}) {
    if (d != nullptr) n += d->weight_bytes + d->activation_bytes;
  }
  return n;
}

void DeploymentSlots::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  dep_.reset();
  prev_.reset();
}

void DeploymentSlots::Install(std::shared_ptr<Deployment> d,
                              bool keep_previous) {
  std::lock_guard<std::mutex> lock(mu_);
  if (keep_previous && dep_) {
    prev_ = std::move(dep_);  // its requests in flight go on
  } else {
    prev_.reset();
  }
  dep_ = std::move(d);
}

bool DeploymentSlots::Release(const std::string& plan_id,
                              bool* current_changed) {
  std::lock_guard<std::mutex> lock(mu_);
  bool released = false;
  *current_changed = false;
  if (prev_ && prev_->plan_id == plan_id) {
    prev_.reset();
    released = true;
  }
  if (dep_ && dep_->plan_id == plan_id) {
    dep_ = std::move(prev_);
    released = true;
    *current_changed = true;
  }
  return released;
}

void DeploymentSlots::PruneBlobs(BlobCache* cache, int64_t max_bytes) const {
  // Under the lock: a deployment installed meanwhile keeps its blobs.
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> keep;
  for (const auto* d : {dep_.get(), prev_.get()}) {
    if (d != nullptr) keep.insert(d->blob_hashes.begin(), d->blob_hashes.end());
  }
  cache->Trim(keep, max_bytes);
}

void DeploymentSlots::AddBytes(WorkerGauges* g) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto* d : {dep_.get(), prev_.get()}) {
    if (d == nullptr) continue;
    g->weight_bytes += d->weight_bytes;
    g->activation_bytes += d->activation_bytes;
  }
}

}  // namespace shoal
