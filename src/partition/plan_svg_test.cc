#include "plan/plan_svg.h"

#include <gtest/gtest.h>

#include <set>

#include "models/load_model.h"
#include "partition/strategy.h"

namespace shoal {
namespace {

Plan LenetPlan(const std::string& strategy, int devices) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  Model m = LoadModel("lenet5", lo).value();
  PlanOptions po;
  po.strategy = strategy;
  po.model.spec = "lenet5";
  for (int i = 0; i < devices; ++i)
    po.devices.push_back(PlanDevice{"dev" + std::to_string(i), 1.0, 0});
  auto p = MakePlan(m.graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.value();
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}

// A box per task and device that runs it, plus the input and output; an
// arrow per pair of tasks on two devices, labelled with its bytes.
TEST(PlanSvg, BoxesPerTaskAndDeviceArrowsBetweenDevices) {
  for (const std::string s : {"lop", "data", "pipeline", "spatial"}) {
    SCOPED_TRACE(s);
    const Plan p = LenetPlan(s, 3);
    const std::string svg = PlanSvg(p, "lenet5 <" + s + ">");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("lenet5 &lt;" + s + "&gt;"), std::string::npos)
        << "the title is escaped";
    size_t boxes = 2;
    for (const Task& t : p.tasks) boxes += t.Replicas().size();
    EXPECT_EQ(Count(svg, "rx=\"4\""), boxes);
    std::set<std::tuple<int, int, int, int>> crossing;
    for (int64_t seq = 0; seq < 3; ++seq) {
      for (const Transfer& x : p.transfers) {
        const int a = p.DeviceOf(x.src.task, seq),
                  b = p.DeviceOf(x.dst.task, seq);
        if (a != b) crossing.insert({x.src.task, x.dst.task, a, b});
      }
    }
    EXPECT_EQ(Count(svg, "marker-end=\"url(#arrow)\""), crossing.size());
    for (const auto& d : p.devices) {
      EXPECT_NE(svg.find(">" + d.name + "<"), std::string::npos) << d.name;
    }
    EXPECT_EQ(Count(svg, "<g>"), Count(svg, "</g>"));
  }
}

TEST(PlanSvg, AFileThatCannotBeWrittenIsNamed) {
  const Status s =
      WritePlanSvg(LenetPlan("lop", 2), "/nonexistent-dir/p.svg", "t");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/p.svg"), std::string::npos);
}

}  // namespace
}  // namespace shoal
