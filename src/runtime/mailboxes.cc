#include "runtime/mailboxes.h"

#include <algorithm>
#include <utility>

#include "graph/cost.h"
#include "plan/region.h"
#include "util/units.h"

namespace shoal {

Mailboxes::Mailboxes(std::string device, int64_t memory_bytes)
    : device_(std::move(device)),
      cap_(memory_bytes > 0 ? memory_bytes / 2 : kUnbudgetedMailboxBytes) {}

void Mailboxes::DropExpired(Clock::time_point now) {
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (it->second.meta.expiry < now) {
      bytes_ -= it->second.held;
      it = requests_.erase(it);
    } else {
      ++it;
    }
  }
}

StatusOr<Mailboxes::RequestState*> Mailboxes::Request(const MailboxPlan& mp,
                                                      const RequestMeta& meta) {
  if (!requests_.count(meta.id) && requests_.size() >= kMaxRequestsInFlight) {
    return ResourceExhausted(
        device_ + " has " + std::to_string(requests_.size()) +
        " requests in flight, the most it takes; request " + meta.id +
        " is refused");
  }
  auto [it, fresh] = requests_.try_emplace(meta.id);
  RequestState& r = it->second;
  if (fresh) {
    r.meta = meta;
    for (const auto& t : mp.plan->tasks) {
      if (mp.plan->DeviceOf(t.id, meta.seq) == mp.device) r.my_tasks++;
    }
  }
  return &r;
}

Status Mailboxes::Open(const MailboxPlan& mp, RequestState& r, int task,
                       Mailbox& box, Clock::time_point now) {
  const Task& t = mp.plan->tasks[task];
  int64_t bytes = 0;
  for (const auto& in : t.fragment.inputs) {
    bytes += NumElements(t.fragment.tensors.at(in).shape) * kBytesPerElement;
  }
  if (bytes_ + bytes > cap_) {
    return ResourceExhausted(device_ + " holds " + MiB(bytes_) +
                             " of inputs for requests in flight; task " +
                             t.name + " of request " + r.meta.id +
                             " would take " + MiB(bytes) + " more, over its " +
                             MiB(cap_) + " (half its memory budget)");
  }
  box.pending = (*mp.incoming)[task];
  box.first = now;
  box.bytes = bytes;
  r.held += bytes;
  bytes_ += bytes;
  for (const auto& in : t.fragment.inputs) {
    box.inputs[in] = Tensor(t.fragment.tensors.at(in).shape);
  }
  return Status::Ok();
}

StatusOr<std::optional<ReadyTask>> Mailboxes::Deliver(
    const MailboxPlan& mp, const RequestMeta& meta, int xi, const Tensor& part,
    Clock::time_point now, Clock::time_point arrived) {
  const Transfer& x = mp.plan->transfers[xi];
  DropExpired(now);
  ASSIGN_OR_RETURN(RequestState * r, Request(mp, meta));
  const int task = x.dst.task;
  // Its task ran: every transfer into it arrived, this one too.
  if (r->done.count(task)) return std::optional<ReadyTask>();
  auto [bit, new_box] = r->boxes.try_emplace(task);
  Mailbox& box = bit->second;
  if (new_box) {
    if (Status s = Open(mp, *r, task, box, now); !s.ok()) {
      r->boxes.erase(bit);
      if (r->boxes.empty() && r->done.empty()) requests_.erase(meta.id);
      return s;
    }
  }
  if (!box.arrived.insert(xi).second) return std::optional<ReadyTask>();
  auto dst = box.inputs.find(x.dst.tensor);
  if (dst == box.inputs.end()) {
    return Internal("transfer into unknown tensor " + x.dst.tensor);
  }
  RETURN_IF_ERROR(CopyRegion(part, Region::Full(part.shape), &dst->second,
                             x.dst.region, x.merge));
  box.board_at =
      std::max(box.board_at, arrived == Clock::time_point{} ? now : arrived);
  if (--box.pending > 0) return std::optional<ReadyTask>();
  ReadyTask rd;
  rd.meta = r->meta;
  rd.task = task;
  rd.first = box.first;
  rd.at = now;
  rd.board_at = box.board_at;
  for (const auto& in : mp.plan->tasks[task].fragment.inputs) {
    rd.inputs.push_back(std::move(box.inputs.at(in)));
  }
  r->held -= box.bytes;
  bytes_ -= box.bytes;
  r->boxes.erase(bit);
  r->done.insert(task);
  if (static_cast<int>(r->done.size()) == r->my_tasks) {
    requests_.erase(meta.id);
  }
  return std::optional<ReadyTask>(std::move(rd));
}

void Mailboxes::Drop(const std::string& id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  bytes_ -= it->second.held;
  requests_.erase(it);
}

std::vector<RequestMeta> Mailboxes::DropAll() {
  std::vector<RequestMeta> dropped;
  for (const auto& [id, r] : requests_) dropped.push_back(r.meta);
  requests_.clear();
  bytes_ = 0;
  return dropped;
}

}  // namespace shoal
