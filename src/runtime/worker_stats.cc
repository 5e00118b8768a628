#include "runtime/worker_stats.h"

#include <algorithm>

#include "plan/trace.h"
#include "util/clock.h"

namespace shoal {

void WorkerStats::ForgetTasks() {
  tasks_.clear();
  timeline_.clear();
}

void WorkerStats::Reset() { *this = WorkerStats(); }

void WorkerStats::AddQueueDepth(size_t depth) {
  queue_hist_[std::min<size_t>(depth, kQueueHistogramBins - 1)]++;
}

void WorkerStats::AddRun(int task, double ms) {
  Task& t = tasks_[task];
  t.runs++;
  t.compute_ms.push_back(static_cast<float>(ms));
}

void WorkerStats::AddSpan(int64_t seq, int task, int transfer,
                          Clock::time_point ready, Clock::time_point start,
                          Clock::time_point end) {
  if (timeline_.size() >= kMaxTimelineSpans) {
    timeline_dropped_++;
    return;
  }
  timeline_.push_back(Span{seq, task, transfer, ready, start, end});
}

void WorkerStats::Report(const Plan* plan, bool timeline,
                         rpc::StatsReply* rep) const {
  for (const auto& [id, c] : tasks_) {
    auto* t = rep->add_tasks();
    t->set_task(id);
    if (plan && id < static_cast<int>(plan->tasks.size())) {
      t->set_name(plan->tasks[id].name);
    }
    t->set_runs(c.runs);
    for (float v : c.compute_ms) t->add_compute_ms(v);
    t->set_wait_ms_total(c.wait_ms);
  }
  rep->set_bytes_sent(bytes_sent_);
  rep->set_bytes_received(bytes_received_);
  for (int64_t v : queue_hist_) rep->add_queue_histogram(v);
  rep->set_busy_ms(busy_ms_);
  rep->set_elapsed_ms(MsSince(since_));
  rep->set_requests_failed(failed_);
  rep->set_messages_received(messages_received_);
  rep->set_board_late_tasks(board_late_tasks_);
  rep->set_board_late_task_ms(board_late_task_ms_);
  rep->set_board_late_messages(board_late_messages_);
  rep->set_board_late_message_ms(board_late_message_ms_);
  if (timeline) {
    for (const Span& x : timeline_) {
      rpc::TimelineSpan* t = rep->add_timeline();
      t->set_seq(x.seq);
      t->set_task(x.task);
      t->set_transfer(x.transfer);
      t->set_ready_ns(SteadyNs(x.ready));
      t->set_start_ns(SteadyNs(x.start));
      t->set_end_ns(SteadyNs(x.end));
    }
    rep->set_timeline_dropped(timeline_dropped_);
  }
}

}  // namespace shoal
