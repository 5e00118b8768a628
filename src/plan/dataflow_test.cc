#include "plan/dataflow.h"

#include <gtest/gtest.h>

#include <string>

namespace shoal {
namespace {

Transfer Copy(int src, int dst, const std::string& tensor = "y") {
  const Region r = Region::Full({1, 4});
  return Transfer{Endpoint{src, tensor, r}, Endpoint{dst, tensor, r},
                  Merge::kCopy, ""};
}

// Task 0 on device 0 computes y from the model input; tasks 1..5 on
// devices 1..5 read it, so do task 6 on device 0 and the model output;
// task 7 alternates between devices 6 and 7 (replicas) and reads y too.
Plan Fan() {
  Plan p;
  p.broadcast.fanout = 2;
  p.input_shape = {1, 4};
  p.input_name = "x";
  for (int d = 0; d < 8; ++d) {
    p.devices.push_back(PlanDevice{"d" + std::to_string(d), 1.0, 0});
  }
  for (int t = 0; t < 8; ++t) {
    Task k;
    k.id = t;
    k.name = "t" + std::to_string(t);
    k.devices = {t == 6 ? 0 : t};
    if (t == 7) k.devices = {6, 7};
    p.tasks.push_back(k);
  }
  p.transfers.push_back(Copy(kModelInput, 0, "x"));                // 0
  for (int t = 1; t <= 5; ++t) p.transfers.push_back(Copy(0, t));  // 1..5
  p.transfers.push_back(Copy(0, kModelOutput));                    // 6
  p.transfers.push_back(Copy(0, 6));  // 7: in place
  p.transfers.push_back(Copy(0, 7));  // 8: replicas
  return p;
}

TEST(Dataflow, IndexFlowCountsEachTasksTransfers) {
  const PlanFlow f = IndexFlow(Fan());
  EXPECT_EQ(f.inputs, std::vector<int>{0});
  EXPECT_EQ(f.output_parts, 1);
  EXPECT_EQ(f.incoming, (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(f.outgoing[0], (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(f.outgoing[3].empty());
}

struct Item {
  int64_t seq;
  int task;
  ReadyKey key() const { return {seq, task}; }
};

TEST(Dataflow, ReadyQueueRunsTheOldestRequestFirstThenPlanOrder) {
  ReadyQueue<Item> q;
  for (const Item& i : {Item{3, 1}, Item{2, 9}, Item{3, 0}, Item{2, 4}}) {
    q.Push(i);
  }
  ASSERT_EQ(q.size(), 4u);
  std::vector<std::pair<int64_t, int>> order;
  while (!q.empty()) {
    const Item i = q.Pop();
    order.push_back({i.seq, i.task});
  }
  EXPECT_EQ(order, (std::vector<std::pair<int64_t, int>>{
                       {2, 4}, {2, 9}, {3, 0}, {3, 1}}));
}

TEST(Dataflow, RouteSendsBroadcastsFirstThenTheRestInPlanOrder) {
  const Plan p = Fan();
  const PlanFlow f = IndexFlow(p);
  // Request 1: task 7 on device 7, so y goes to six other devices.
  OutputRoute r = RouteOutputs(p, f.outgoing[0], 0, 1);
  ASSERT_EQ(r.broadcasts.size(), 1u);
  EXPECT_EQ(r.broadcasts[0], (std::vector<int>{1, 2, 3, 4, 5, 8}));
  ASSERT_EQ(r.direct.size(), 2u);
  EXPECT_EQ(r.direct[0].transfer, 6);  // the model output: the coordinator
  EXPECT_EQ(r.direct[0].to, -1);
  EXPECT_FALSE(r.direct[0].here);
  EXPECT_EQ(r.direct[1].transfer, 7);  // task 6 runs on device 0 itself
  EXPECT_EQ(r.direct[1].to, 0);
  EXPECT_TRUE(r.direct[1].here);
  // Request 2: task 7's replica on device 6.
  r = RouteOutputs(p, f.outgoing[0], 0, 2);
  ASSERT_EQ(r.broadcasts.size(), 1u);
  EXPECT_EQ(r.broadcasts[0].back(), 8);

  // No broadcasts: every transfer on its own, each to its reader's device.
  Plan direct = p;
  direct.broadcast.fanout = 0;
  r = RouteOutputs(direct, f.outgoing[0], 0, 2);
  EXPECT_TRUE(r.broadcasts.empty());
  ASSERT_EQ(r.direct.size(), 8u);
  EXPECT_EQ(r.direct[0].to, 1);
  EXPECT_EQ(r.direct.back().transfer, 8);
  EXPECT_EQ(r.direct.back().to, 6);
  EXPECT_FALSE(r.direct.back().here);
}

// The coordinator sends the input device's own parts first (no link), then
// the others, then the broadcasts; the input read as the output goes to it.
TEST(Dataflow, RouteInputPutsTheInputDevicesPartsFirst) {
  Plan p = Fan();
  p.broadcast.fanout = 0;
  p.input_device = 3;
  const Region r = Region::Full({1, 4});
  p.transfers = {Copy(kModelInput, 0, "x"), Copy(kModelInput, 3, "x"),
                 Copy(kModelInput, kModelOutput, "x"),
                 Copy(kModelInput, 4, "x")};
  p.transfers[2].dst.region = r;
  const OutputRoute route = RouteInput(p, IndexFlow(p).inputs, 1);
  EXPECT_TRUE(route.broadcasts.empty());
  ASSERT_EQ(route.direct.size(), 4u);
  std::vector<int> order, to;
  for (const auto& d : route.direct) {
    order.push_back(d.transfer);
    to.push_back(d.to);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 0, 2, 3}));
  EXPECT_EQ(to, (std::vector<int>{3, 0, -1, 4}));
  EXPECT_TRUE(route.direct[0].here);
  EXPECT_FALSE(route.direct[1].here);
}

}  // namespace
}  // namespace shoal
