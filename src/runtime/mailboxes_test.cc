#include "runtime/mailboxes.h"

#include <gtest/gtest.h>

#include "runtime/deployment.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

// Task 0 on device 0 reads tensor "a" (1x4) from two transfers of two
// columns each; task 1 runs on device 1. This worker is device 0.
std::shared_ptr<Deployment> TwoHalves() {
  auto d = std::make_shared<Deployment>();
  Plan& p = d->plan;
  p.devices = {PlanDevice{"d0", 1.0, 0}, PlanDevice{"d1", 1.0, 0}};
  for (int i = 0; i < 2; ++i) {
    Task t;
    t.id = i;
    t.name = "t" + std::to_string(i);
    t.devices = {i};
    t.fragment.inputs = {"a"};
    t.fragment.tensors["a"] = TensorInfo{"a", {1, 4}};
    p.tasks.push_back(t);
  }
  for (int64_t c : {0, 2}) {
    p.transfers.push_back(Transfer{
        Endpoint{kModelInput, "x", Region{{0, c}, {1, c + 2}}},
        Endpoint{0, "a", Region{{0, c}, {1, c + 2}}}, Merge::kCopy, ""});
  }
  d->device = 0;
  d->incoming = {2, 0};
  return d;
}

MailboxPlan View(const Deployment& d) {
  return MailboxPlan{&d.plan, d.device, &d.incoming};
}

RequestMeta Meta(const std::string& id, int64_t seq = 0) {
  return RequestMeta{id, seq, "", Clock::now() + std::chrono::seconds(60)};
}

TEST(Mailboxes, HandsOverATaskWhenItsLastInputArrives) {
  auto d = TwoHalves();
  Mailboxes boxes("d0", 0);
  const auto now = Clock::now();
  auto first =
      boxes.Deliver(View(*d), Meta("r"), 0, Tensor({1, 2}, {1, 2}), now);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE(first->has_value());
  EXPECT_EQ(boxes.requests(), 1u);
  EXPECT_EQ(boxes.bytes(), 16);  // the task's whole input, 4 floats
  auto second =
      boxes.Deliver(View(*d), Meta("r"), 1, Tensor({1, 2}, {3, 4}), now);
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_TRUE(second->has_value());
  const ReadyTask& rd = **second;
  EXPECT_EQ(rd.task, 0);
  ASSERT_EQ(rd.inputs.size(), 1u);
  EXPECT_EQ(rd.inputs[0].data, (std::vector<float>{1, 2, 3, 4}));
  // The request's only task here is done: nothing is held for it.
  EXPECT_EQ(boxes.requests(), 0u);
  EXPECT_EQ(boxes.bytes(), 0);
}

// On an emulated board a task starts, in board time, when the input that
// arrived latest in board time did: not the one this host delivered last.
TEST(Mailboxes, ATaskIsReadyInBoardTimeWhenItsLatestInputArrived) {
  auto d = TwoHalves();
  Mailboxes boxes("d0", 0);
  const auto now = Clock::now();
  const auto early = now - std::chrono::milliseconds(30);
  const auto late = now - std::chrono::milliseconds(10);
  ASSERT_TRUE(
      boxes.Deliver(View(*d), Meta("r"), 0, Tensor({1, 2}, {1, 2}), now, late)
          .ok());
  auto ready =
      boxes.Deliver(View(*d), Meta("r"), 1, Tensor({1, 2}, {3, 4}), now, early);
  ASSERT_TRUE(ready.ok() && ready->has_value());
  EXPECT_EQ((*ready)->board_at, late);
  EXPECT_EQ((*ready)->at, now);
  // Without board times: when this host delivered it.
  auto plain =
      boxes.Deliver(View(*d), Meta("s"), 0, Tensor({1, 2}, {1, 2}), early);
  ASSERT_TRUE(plain.ok());
  auto plain2 =
      boxes.Deliver(View(*d), Meta("s"), 1, Tensor({1, 2}, {3, 4}), now);
  ASSERT_TRUE(plain2.ok() && plain2->has_value());
  EXPECT_EQ((*plain2)->board_at, now);
}

// A send retried after its connection dropped may arrive twice: the second
// copy is dropped, before its task ran (not summed twice, not counted as
// the task's other input) and after.
TEST(Mailboxes, DropsATransferThatArrivesAgain) {
  auto d = TwoHalves();
  for (auto& x : d->plan.transfers) x.merge = Merge::kSum;
  d->plan.tasks.push_back(d->plan.tasks[0]);  // a second task here keeps
  d->plan.tasks.back().id = 2;                // the request open
  d->incoming.push_back(0);
  Mailboxes boxes("d0", 0);
  const auto now = Clock::now();
  auto first =
      boxes.Deliver(View(*d), Meta("r"), 0, Tensor({1, 2}, {1, 2}), now);
  ASSERT_TRUE(first.ok() && !first->has_value());
  auto copy =
      boxes.Deliver(View(*d), Meta("r"), 0, Tensor({1, 2}, {1, 2}), now);
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  EXPECT_FALSE(copy->has_value()) << "the copy is not the task's other input";
  auto last =
      boxes.Deliver(View(*d), Meta("r"), 1, Tensor({1, 2}, {3, 4}), now);
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((**last).inputs[0].data, (std::vector<float>{1, 2, 3, 4}));
  auto again =
      boxes.Deliver(View(*d), Meta("r"), 1, Tensor({1, 2}, {3, 4}), now);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->has_value());
}

TEST(Mailboxes, RefusesInputsOverHalfTheBudget) {
  auto d = TwoHalves();
  Mailboxes boxes("d0", 60);  // 30 bytes for mailboxes: one task's 16
  const auto now = Clock::now();
  ASSERT_TRUE(boxes.Deliver(View(*d), Meta("r1"), 0, Tensor({1, 2}), now).ok());
  auto over = boxes.Deliver(View(*d), Meta("r2"), 0, Tensor({1, 2}), now);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("half its memory budget"),
            std::string::npos);
  // The refused request holds nothing.
  EXPECT_EQ(boxes.requests(), 1u);
  EXPECT_EQ(boxes.bytes(), 16);
}

TEST(Mailboxes, RefusesRequestsBeyondTheMostInFlight) {
  auto d = TwoHalves();
  Mailboxes boxes("d0", 0);
  const auto now = Clock::now();
  for (size_t i = 0; i < kMaxRequestsInFlight; ++i) {
    ASSERT_TRUE(boxes
                    .Deliver(View(*d), Meta("r" + std::to_string(i)), 0,
                             Tensor({1, 2}), now)
                    .ok());
  }
  auto more = boxes.Deliver(View(*d), Meta("one-more"), 0, Tensor({1, 2}), now);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), Code::kResourceExhausted);
  // A request already open still takes its inputs.
  EXPECT_TRUE(boxes.Deliver(View(*d), Meta("r0"), 1, Tensor({1, 2}), now).ok());
}

TEST(Mailboxes, ForgetsExpiredRequestsAndDropsOnAsk) {
  auto d = TwoHalves();
  Mailboxes boxes("d0", 0);
  const auto now = Clock::now();
  RequestMeta old = Meta("old");
  old.expiry = now - std::chrono::seconds(1);
  ASSERT_TRUE(boxes.Deliver(View(*d), old, 0, Tensor({1, 2}), now).ok());
  ASSERT_TRUE(boxes.Deliver(View(*d), Meta("a"), 0, Tensor({1, 2}), now).ok());
  EXPECT_EQ(boxes.requests(), 1u);  // "old" went when "a" arrived
  ASSERT_TRUE(boxes.Deliver(View(*d), Meta("b"), 0, Tensor({1, 2}), now).ok());
  boxes.Drop("a");
  EXPECT_EQ(boxes.requests(), 1u);
  EXPECT_EQ(boxes.bytes(), 16);
  const auto all = boxes.DropAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, "b");
  EXPECT_EQ(boxes.requests(), 0u);
  EXPECT_EQ(boxes.bytes(), 0);
}

}  // namespace
}  // namespace shoal
