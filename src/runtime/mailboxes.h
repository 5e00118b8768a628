// The inputs of the requests a worker is running: a mailbox per task whose
// inputs are arriving, filled region by region as transfers come in, and
// handed over as a ready task when its last input is here.
//
// Bounded, because one message opens a mailbox as large as its task's
// whole input: without a bound a peer could make a worker allocate
// gigabytes with a few bytes each. At most kMaxRequestsInFlight requests at
// once, and half the memory budget (kUnbudgetedMailboxBytes without one)
// for their inputs. Not locked: the scheduler that owns it serialises
// every call. The worker's scheduler and `run --local` both deliver
// through it.
#ifndef SHOAL_RUNTIME_MAILBOXES_H_
#define SHOAL_RUNTIME_MAILBOXES_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/weights.h"
#include "plan/dataflow.h"
#include "plan/plan.h"
#include "runtime/worker_core.h"
#include "util/status.h"

namespace shoal {

constexpr size_t kMaxRequestsInFlight = 256;
constexpr int64_t kUnbudgetedMailboxBytes = int64_t{4} << 30;

// What mailboxes read of a plan as one device runs it: the device, and
// how many transfers each task of the plan waits for.
struct MailboxPlan {
  const Plan* plan = nullptr;
  int device = 0;
  const std::vector<int>* incoming = nullptr;  // per task
};

// A task of a request whose inputs have all arrived.
struct ReadyTask {
  RequestMeta meta;
  int task = 0;
  std::vector<Tensor> inputs;  // in the order of its fragment's inputs
  std::chrono::steady_clock::time_point first;  // its first input arrived
  std::chrono::steady_clock::time_point at;     // its last input arrived
  // On an emulated board, when its last input arrived in the board's time
  // (Deliver's `arrived`): a message's time on the board's CPU counted from
  // when the sending board was done with it, not from when this host got to
  // it (task_scheduler.h).
  std::chrono::steady_clock::time_point board_at;
  ReadyKey key() const { return {meta.seq, task}; }
};

class Mailboxes {
 public:
  using Clock = std::chrono::steady_clock;

  // `device` names this worker in errors; `memory_bytes` is its budget
  // (0: none).
  Mailboxes(std::string device, int64_t memory_bytes);

  // Puts transfer `xi` of `mp`'s plan (whose reader runs on mp.device)
  // region `part` into its task's mailbox; the task, when that was its last
  // input. Requests past their expiry are dropped first. A transfer that
  // arrives again for the same request (a send retried after its
  // connection dropped, whose first try got here: wire.h's SendTensor) is
  // dropped: counted once, summed once. `arrived`: when it arrived in
  // board time (at most `now`; none: `now`).
  StatusOr<std::optional<ReadyTask>> Deliver(
      const MailboxPlan& mp, const RequestMeta& meta, int xi,
      const Tensor& part, Clock::time_point now,
      Clock::time_point arrived = Clock::time_point{});

  void Drop(const std::string& id);
  // Every request, for their coordinators to be told.
  std::vector<RequestMeta> DropAll();

  size_t requests() const { return requests_.size(); }
  int64_t bytes() const { return bytes_; }

 private:
  struct Mailbox {
    std::map<std::string, Tensor> inputs;
    int pending = 0;        // transfers still to arrive
    std::set<int> arrived;  // the transfers that did
    Clock::time_point first;
    Clock::time_point board_at;  // the latest `arrived`
    int64_t bytes = 0;           // of `inputs`
  };
  struct RequestState {
    RequestMeta meta;
    std::map<int, Mailbox> boxes;
    std::set<int> done;
    int my_tasks = 0;
    int64_t held = 0;  // bytes of its mailboxes
  };

  void DropExpired(Clock::time_point now);
  StatusOr<RequestState*> Request(const MailboxPlan& mp,
                                  const RequestMeta& meta);
  // Opens task `task`'s mailbox, within the byte cap.
  Status Open(const MailboxPlan& mp, RequestState& r, int task, Mailbox& box,
              Clock::time_point now);

  const std::string device_;
  const int64_t cap_;
  std::map<std::string, RequestState> requests_;
  int64_t bytes_ = 0;  // the sum of every request's `held`
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_MAILBOXES_H_
