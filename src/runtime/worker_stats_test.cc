// A worker's statistics: what Stats reports, the timeline's cap, and what a
// new deployment or a reset forgets.
#include "runtime/worker_stats.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using Clock = WorkerStats::Clock;

TEST(WorkerStats, ReportsWhatWasCounted) {
  WorkerStats s;
  s.AddRun(2, 1.5);
  s.AddRun(2, 2.5);
  s.AddWait(2, 4);
  s.AddSent(100);
  s.AddReceived(40);
  s.AddFailed();
  s.AddBusy(4);
  s.AddBoardLateTask(0.5);
  s.AddBoardLateTask(1.5);
  s.AddBoardLateMessage(3);
  s.AddQueueDepth(0);
  s.AddQueueDepth(3);
  s.AddQueueDepth(99);  // the last bin holds 16 or more
  const auto t = Clock::now();
  s.AddSpan(7, 2, -1, t, t, t + std::chrono::milliseconds(1));
  Plan p;
  p.tasks.resize(3);
  p.tasks[2].name = "conv@1";
  rpc::StatsReply r;
  s.Report(&p, /*timeline=*/true, &r);
  ASSERT_EQ(r.tasks_size(), 1);
  EXPECT_EQ(r.tasks(0).task(), 2);
  EXPECT_EQ(r.tasks(0).name(), "conv@1");
  EXPECT_EQ(r.tasks(0).runs(), 2);
  ASSERT_EQ(r.tasks(0).compute_ms_size(), 2);
  EXPECT_FLOAT_EQ(r.tasks(0).compute_ms(1), 2.5f);
  EXPECT_EQ(r.tasks(0).wait_ms_total(), 4);
  EXPECT_EQ(r.bytes_sent(), 100);
  EXPECT_EQ(r.bytes_received(), 40);
  EXPECT_EQ(r.requests_failed(), 1);
  EXPECT_EQ(r.busy_ms(), 4);
  EXPECT_EQ(r.messages_received(), 1);
  EXPECT_EQ(r.board_late_tasks(), 2);
  EXPECT_EQ(r.board_late_task_ms(), 2);
  EXPECT_EQ(r.board_late_messages(), 1);
  EXPECT_EQ(r.board_late_message_ms(), 3);
  ASSERT_EQ(r.queue_histogram_size(), WorkerStats::kQueueHistogramBins);
  EXPECT_EQ(r.queue_histogram(0), 1);
  EXPECT_EQ(r.queue_histogram(3), 1);
  EXPECT_EQ(r.queue_histogram(WorkerStats::kQueueHistogramBins - 1), 1);
  ASSERT_EQ(r.timeline_size(), 1);
  EXPECT_EQ(r.timeline(0).seq(), 7);
  EXPECT_EQ(r.timeline(0).transfer(), -1);
  EXPECT_EQ(r.timeline(0).end_ns() - r.timeline(0).start_ns(), 1000000);
  // Without the timeline asked, no spans travel.
  rpc::StatsReply quiet;
  s.Report(nullptr, false, &quiet);
  EXPECT_EQ(quiet.timeline_size(), 0);
  EXPECT_EQ(quiet.tasks(0).name(), "");
}

TEST(WorkerStats, TimelineIsCappedAndCountsWhatItDropped) {
  WorkerStats s;
  const auto t = Clock::now();
  for (size_t i = 0; i < WorkerStats::kMaxTimelineSpans + 5; ++i) {
    s.AddSpan(int64_t(i), 0, -1, t, t, t);
  }
  rpc::StatsReply r;
  s.Report(nullptr, true, &r);
  EXPECT_EQ(size_t(r.timeline_size()), WorkerStats::kMaxTimelineSpans);
  EXPECT_EQ(r.timeline_dropped(), 5);
}

TEST(WorkerStats, ANewDeploymentForgetsTasksAResetEverything) {
  WorkerStats s;
  const auto t = Clock::now();
  s.AddRun(0, 1);
  s.AddSpan(1, 0, -1, t, t, t);
  s.AddSent(10);
  s.ForgetTasks();
  rpc::StatsReply r;
  s.Report(nullptr, true, &r);
  EXPECT_EQ(r.tasks_size(), 0);
  EXPECT_EQ(r.timeline_size(), 0);
  EXPECT_EQ(r.bytes_sent(), 10);
  s.Reset();
  rpc::StatsReply z;
  s.Report(nullptr, true, &z);
  EXPECT_EQ(z.bytes_sent(), 0);
  EXPECT_EQ(z.queue_histogram_size(), WorkerStats::kQueueHistogramBins);
  EXPECT_EQ(z.queue_histogram(0), 0);
}

}  // namespace
}  // namespace shoal
