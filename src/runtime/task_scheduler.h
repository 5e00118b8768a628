// A worker's execution core: the mailboxes of the requests in flight, the
// queue of tasks whose inputs are all here, and the compute thread that
// runs them and passes their outputs on: to a task on this device
// directly, to others through the sender (as broadcast trees where several
// devices read the same bytes). The order of both is the plan's dataflow
// (plan/dataflow.h), which `run --local` and the simulator follow too.
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
  // input that was.
  Status Deliver(const std::shared_ptr<Deployment>& d, const RequestMeta& meta,
                 const std::vector<int>& transfers, const Tensor& part);
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
                       const RequestMeta& meta, int xi, const Tensor& part);
  void Loop();
  void RunReady(Queued& rd);
  bool ComputeTask(Queued& rd, std::vector<Tensor>* outs);
  bool SendBroadcasts(const Queued& rd, const Sources& srcs,
                      const OutputRoute& route);
  void SendDirect(const Queued& rd, const Sources& srcs,
                  const OutputRoute& route);

  const WorkerCore core_;
  WorkerSender* const sender_;

  std::mutex mu_;  // guards the mailboxes and the ready queue
  std::condition_variable cv_;
  bool stopping_ = false;
  Mailboxes boxes_;
  ReadyQueue<Queued> ready_;
  std::thread thread_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_TASK_SCHEDULER_H_
