// How a device runs a Plan's tasks: the rules of one dataflow, which the
// worker's scheduler (runtime/task_scheduler.h), `shoal run --local`
// (runtime/local_runner.h) and the simulator (sim/simulator.h) all follow,
// with real tensors or with a simulated clock and links. A task runs when
// the last of its input transfers is in; a device runs its ready tasks one
// at a time, the oldest request first; a finished task's outputs leave in
// one order, broadcasts first. What the simulator predicts and what `run
// --local` tests is then what the workers do.
#ifndef SHOAL_PLAN_DATAFLOW_H_
#define SHOAL_PLAN_DATAFLOW_H_

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "plan/plan.h"

namespace shoal {

// The transfers into and out of each task of a plan.
struct PlanFlow {
  std::vector<int> incoming;               // per task: transfers it waits for
  std::vector<std::vector<int>> outgoing;  // per task: transfers out, in order
  std::vector<int> inputs;                 // transfers out of the model input
  int output_parts = 0;                    // transfers into the model output
};
PlanFlow IndexFlow(const Plan& p);

// A ready task of a request. A device runs the oldest request's first:
// then a request started earlier finishes earlier, and with several in
// flight none waits behind the ones after it; within a request, the
// lowest task id (the plan's order) first.
struct ReadyKey {
  int64_t seq = 0;
  int task = 0;
};
inline bool RunsBefore(const ReadyKey& a, const ReadyKey& b) {
  return a.seq != b.seq ? a.seq < b.seq : a.task < b.task;
}

// A device's ready tasks in the order it runs them. T has `ReadyKey
// key() const`.
template <typename T>
class ReadyQueue {
 public:
  void Push(T t) { q_.push(std::move(t)); }
  bool empty() const { return q_.empty(); }
  size_t size() const { return q_.size(); }
  const T& Next() const { return q_.top(); }
  // Removes and returns the task to run next.
  T Pop() {
    T t = std::move(const_cast<T&>(q_.top()));
    q_.pop();
    return t;
  }

 private:
  struct Later {  // priority_queue's top is the greatest: the one to run
    bool operator()(const T& a, const T& b) const {
      return RunsBefore(b.key(), a.key());
    }
  };
  std::priority_queue<T, std::vector<T>, Later> q_;
};

// Where the outputs of a task that device `device` ran for request `seq`
// go, in the order the device hands them on: first each broadcast
// (plan/broadcast.h BroadcastGroups: the transfers of one source read by
// several devices, sent down their trees), then every other transfer in
// `outgoing`'s order, either delivered in place (its reader runs on this
// device: no message, no link) or sent as one message to its reader's
// device or, for the model's output, to the coordinator.
struct OutputRoute {
  struct Direct {
    int transfer = 0;
    int to = 0;  // the reader's device; -1: the coordinator (model output)
    bool here = false;
  };
  std::vector<std::vector<int>> broadcasts;
  std::vector<Direct> direct;
};
OutputRoute RouteOutputs(const Plan& p, const std::vector<int>& outgoing,
                         int device, int64_t seq);

// The model input's route (`inputs`: PlanFlow::inputs), which the
// coordinator sends for the input device: RouteOutputs from the input
// device, the parts it reads itself first. They cross no link, so its
// tasks start while the other devices' parts are still on the air.
OutputRoute RouteInput(const Plan& p, const std::vector<int>& inputs,
                       int64_t seq);

}  // namespace shoal

#endif  // SHOAL_PLAN_DATAFLOW_H_
