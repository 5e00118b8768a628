#include "plan/timeline_svg.h"

#include <gtest/gtest.h>

#include <fstream>

#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "sim/simulator.h"

namespace shoal {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1)) {
    n++;
  }
  return n;
}

// The simulator's spans of a lop plan, drawn: one box per task run and
// message of the chosen request, every device named (escaped for XML).
TEST(TimelineSvg, DrawsTheMedianRequestsTasksAndMessages) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("lenet5", lo).value();
  PlanOptions po;
  po.strategy = "lop";
  po.devices = testing::EqualDevices(3);
  po.devices[2].name = "pi<2>&";
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  Cluster c;
  for (const auto& d : p->devices) {
    DeviceSpec s;
    s.name = d.name;
    s.link = Link{62e6, 9e-3};
    c.devices.push_back(s);
  }
  SimOptions so;
  so.requests = 5;
  so.trace = true;
  auto r = Simulate(*p, LatencyModel::FromCluster(c), so);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int64_t seq = TimelineRequest(r->spans);
  ASSERT_GE(seq, 0);
  int boxes = 0;
  for (const auto& s : r->spans) {
    boxes += s.seq == seq && s.kind != TraceSpan::Kind::kRequest;
  }
  ASSERT_GT(boxes, 0);
  const std::string svg = TimelineSvg(*p, r->spans, "a <lop> plan");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  // Each box, the background and the legend's two.
  EXPECT_EQ(Count(svg, "<rect"), static_cast<size_t>(boxes) + 3);
  EXPECT_EQ(Count(svg, "<title>"), static_cast<size_t>(boxes));
  EXPECT_NE(svg.find(">dev0<"), std::string::npos);
  EXPECT_NE(svg.find("pi&lt;2&gt;&amp;"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;lop&gt; plan (request " + std::to_string(seq)),
            std::string::npos);
  EXPECT_EQ(svg.find("<2>"), std::string::npos);

  // The median of three request spans of 30, 10 and 20 ms is the third.
  std::vector<TraceSpan> req(3);
  for (int i = 0; i < 3; ++i) {
    req[i].kind = TraceSpan::Kind::kRequest;
    req[i].seq = i + 1;
    req[i].end_s = (i == 0 ? 0.03 : i == 1 ? 0.01 : 0.02);
  }
  EXPECT_EQ(TimelineRequest(req), 3);
  EXPECT_EQ(TimelineRequest({}), -1);
  const std::string path = ::testing::TempDir() + "/no-such-dir/t.svg";
  Status s = WriteTimelineSvg(path, *p, r->spans, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_FALSE(
      WriteTimelineSvg(::testing::TempDir() + "/t.svg", *p, {}, "x").ok());
}

// The tick labels of a timeline, in order.
std::vector<std::string> Ticks(const std::string& svg) {
  std::vector<std::string> out;
  const std::string mark = "text-anchor=\"middle\" fill=\"#555\">";
  for (size_t at = svg.find(mark); at != std::string::npos;
       at = svg.find(mark, at + 1)) {
    const size_t from = at + mark.size();
    out.push_back(svg.substr(from, svg.find('<', from) - from));
  }
  return out;
}

// The widths of its boxes (tasks and messages), summed.
double BoxWidths(const std::string& svg) {
  double sum = 0;
  const std::string mark = "\" width=\"";
  for (size_t at = svg.find("<g><title>"); at != std::string::npos;
       at = svg.find("<g><title>", at + 1)) {
    const size_t w = svg.find(mark, at) + mark.size();
    sum += std::stod(svg.substr(w, svg.find('"', w) - w));
  }
  return sum;
}

// A measured request twice as long as the predicted one: drawn each to its
// own length they look alike; drawn to one axis (--timeline-ms) they have
// the same ticks and the longer one's boxes are twice as wide.
TEST(TimelineSvg, TwoTimelinesShareOneAxis) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("lenet5", lo).value();
  PlanOptions po;
  po.strategy = "pipeline";
  po.devices = testing::EqualDevices(2);
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  Cluster c;
  for (const auto& d : p->devices) {
    DeviceSpec s;
    s.name = d.name;
    s.link = Link{62e6, 9e-3};
    c.devices.push_back(s);
  }
  SimOptions so;
  so.requests = 1;
  so.trace = true;
  auto r = Simulate(*p, LatencyModel::FromCluster(c), so);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<TraceSpan>& predicted = r->spans;
  std::vector<TraceSpan> measured = predicted;
  double length = 0;
  for (auto& s : measured) {
    s.ready_s *= 2;
    s.start_s *= 2;
    s.end_s *= 2;
    length = std::max(length, s.end_s);
  }
  ASSERT_GT(length, 0);
  // Each to its own length: the same picture, different ticks.
  EXPECT_NE(Ticks(TimelineSvg(*p, predicted, "p")),
            Ticks(TimelineSvg(*p, measured, "m")));
  EXPECT_NEAR(BoxWidths(TimelineSvg(*p, predicted, "p")),
              BoxWidths(TimelineSvg(*p, measured, "m")), 2.0);
  // To one axis, the measured request's length.
  const std::string ps = TimelineSvg(*p, predicted, "p", -1, length);
  const std::string ms = TimelineSvg(*p, measured, "m", -1, length);
  EXPECT_EQ(Ticks(ps), Ticks(ms));
  EXPECT_GE(Ticks(ps).size(), 5u);
  EXPECT_NEAR(BoxWidths(ms) / BoxWidths(ps), 2.0, 0.1);
  EXPECT_NE(ps.find("; axis to "), std::string::npos);
  EXPECT_EQ(ms.find("; axis to "), std::string::npos);  // it is its length
  // An axis shorter than the request is the request: nothing cut off.
  EXPECT_EQ(TimelineSvg(*p, measured, "m", -1, length / 4),
            TimelineSvg(*p, measured, "m"));
}

}  // namespace
}  // namespace shoal
