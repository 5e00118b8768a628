// What a worker's Stats RPC reports, counted since the last reset: each
// task's runs, compute times and input waits, bytes in and out, failed
// requests, the ready queue's depth, busy time, where the host fell behind
// an emulated board, and the timeline of spans
// `shoal bench --trace` reads. Not locked: the worker counts under its own
// lock, beside the requests and mailboxes the counts are about.
#ifndef SHOAL_RUNTIME_WORKER_STATS_H_
#define SHOAL_RUNTIME_WORKER_STATS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "plan/plan.h"
#include "shoal.pb.h"

namespace shoal {

class WorkerStats {
 public:
  using Clock = std::chrono::steady_clock;

  // Ready-queue depths 0..15, and 16 or more.
  static constexpr int kQueueHistogramBins = 17;
  // Spans kept between two resets (a bench of AlexNet split over four
  // devices records about 100 a request); later ones are counted, not kept,
  // so that a long-running coordinator that never asks costs a worker
  // under a megabyte.
  static constexpr size_t kMaxTimelineSpans = 1 << 14;

  // Another deployment: its tasks are other tasks (bytes, failures and
  // busy time go on).
  void ForgetTasks();
  // Everything, as a Stats call with `reset` asks.
  void Reset();

  void AddWait(int task, double ms) { tasks_[task].wait_ms += ms; }
  // The ready queue's depth when a task joined it.
  void AddQueueDepth(size_t depth);
  void AddReceived(int64_t bytes) {
    bytes_received_ += bytes;
    messages_received_++;
  }
  // An emulated board's task, or a message it received, that the host
  // finished `ms` after the board's time for it had passed.
  void AddBoardLateTask(double ms) {
    board_late_tasks_++;
    board_late_task_ms_ += ms;
  }
  void AddBoardLateMessage(double ms) {
    board_late_messages_++;
    board_late_message_ms_ += ms;
  }
  void AddSent(int64_t bytes) { bytes_sent_ += bytes; }
  void AddFailed() { failed_++; }
  void AddBusy(double ms) { busy_ms_ += ms; }
  void AddRun(int task, double ms);
  // A task's run (transfer -1) or a message's send (task -1).
  void AddSpan(int64_t seq, int task, int transfer, Clock::time_point ready,
               Clock::time_point start, Clock::time_point end);

  // Fills `rep`: task names from `plan` where given, the timeline if
  // asked.
  void Report(const Plan* plan, bool timeline, rpc::StatsReply* rep) const;

 private:
  struct Task {
    int64_t runs = 0;
    std::vector<float> compute_ms;
    double wait_ms = 0;
  };
  struct Span {
    int64_t seq;
    int task, transfer;
    Clock::time_point ready, start, end;
  };
  std::map<int, Task> tasks_;
  int64_t bytes_sent_ = 0, bytes_received_ = 0, failed_ = 0;
  int64_t messages_received_ = 0;
  int64_t board_late_tasks_ = 0, board_late_messages_ = 0;
  double board_late_task_ms_ = 0, board_late_message_ms_ = 0;
  std::vector<int64_t> queue_hist_ = std::vector<int64_t>(kQueueHistogramBins);
  double busy_ms_ = 0;
  Clock::time_point since_ = Clock::now();
  std::vector<Span> timeline_;
  int64_t timeline_dropped_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WORKER_STATS_H_
