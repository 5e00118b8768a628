// A worker's execution core: the mailboxes of the requests in flight, the
// queue of tasks whose inputs are all here, and the compute thread that
// runs them and passes their outputs on: to a task on this device
// directly, to others through the sender (as broadcast trees where several
// devices read the same bytes). The order of both is the plan's dataflow
// (plan/dataflow.h), which `run --local` and the simulator follow too.
//
// An emulated board keeps its own clock: a task starts, in board time,
// when its last input arrived in board time or when the board finished its
// previous task, the later, and is held until the class's time for it has
// passed since then. A message arrives in board time when the sending
// board's CPU and the link were done with it plus the receiving board's CPU
// for it (worker_sender.cc, worker_tensors.cc). So the host's own delays
// (a thread waiting for a core, gRPC's work on this host) hide inside the
// boards' times wherever the board would have been slower, and a board
// time is the same on a busy host as on an idle one, as the simulator
// counts it.
#ifndef SHOAL_RUNTIME_TASK_SCHEDULER_H_
#define SHOAL_RUNTIME_TASK_SCHEDULER_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plan/dataflow.h"
#include "runtime/deployment.h"
#include "runtime/mailboxes.h"
#include "runtime/worker_core.h"
#include "runtime/worker_sender.h"

namespace shoal {

class TaskScheduler {
 public:
  TaskScheduler(WorkerCore core, WorkerSender* sender);
  ~TaskScheduler() { Stop(); }

  void Start();
  // Stops the compute thread after the task it runs; queued tasks stay.
  void Stop();

  // Puts the region `part` of each transfer in `transfers` (all of one
  // message) into its task's mailbox, and queues each task whose last
  // input that was. `arrived`: when it arrived in board time (none: now).
  Status Deliver(const std::shared_ptr<Deployment>& d, const RequestMeta& meta,
                 const std::vector<int>& transfers, const Tensor& part,
                 std::chrono::steady_clock::time_point arrived = {});
  void Drop(const std::string& id);
  // Every request in flight, for their coordinators to be told.
  std::vector<RequestMeta> DropAll();

  // Ready tasks, requests in flight and their mailboxes' bytes.
  void AddGauges(WorkerGauges* g);

 private:
  using Clock = std::chrono::steady_clock;
  using Sources = std::map<std::string, const Tensor*>;
  // A ready task and the deployment it belongs to.
  struct Queued {
    std::shared_ptr<Deployment> dep;
    ReadyTask t;
    ReadyKey key() const { return t.key(); }
  };

  Status DeliverLocked(const std::shared_ptr<Deployment>& d,
                       const RequestMeta& meta, int xi, const Tensor& part,
                       Clock::time_point arrived);
  void Loop();
  void RunReady(Queued& rd);
  // `done`: when the task finished in board time (on a board), or now.
  bool ComputeTask(Queued& rd, std::vector<Tensor>* outs,
                   Clock::time_point* done);
  bool SendBroadcasts(const Queued& rd, const Sources& srcs,
                      const OutputRoute& route, Clock::time_point done);
  void SendDirect(const Queued& rd, const Sources& srcs,
                  const OutputRoute& route, Clock::time_point done);

  const WorkerCore core_;
  WorkerSender* const sender_;

  std::mutex mu_;  // guards the mailboxes and the ready queue
  std::condition_variable cv_;
  bool stopping_ = false;
  Mailboxes boxes_;
  ReadyQueue<Queued> ready_;
  std::thread thread_;
  // An emulated board's clock: when it finished its last task (the compute
  // thread's alone).
  Clock::time_point board_free_{};
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_TASK_SCHEDULER_H_
