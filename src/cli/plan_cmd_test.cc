// `shoal plan` as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "io/npy.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

// The text of a plan file `shoal plan -o` wrote.
std::string ReadPlan(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// Planned without links, every transfer is free: the output says so, so
// that nobody reads its predictions as a cluster's.
TEST(PlanCmd, SaysWhenLinksAreUnknown) {
  const std::string shoal = SHOAL_BINARY;
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --devices 2 --strategy lop", &out),
            0)
      << out;
  EXPECT_NE(out.find("links are unknown"), std::string::npos) << out;
  std::string with_links;
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --cluster " + SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy lop",
                       &with_links),
            0)
      << with_links;
  EXPECT_EQ(with_links.find("links are unknown"), std::string::npos)
      << with_links;
}

// By default the answer fits a screen however many tasks the plan has:
// what auto chose and its prediction (the ones the plan's JSON records),
// a line per device, the nearest rivals, and where the details are. The
// MILP's "optimal" is said of the milp candidate only, and a prediction
// from specs says how far off such predictions have been.
TEST(PlanCmd, DefaultOutputIsTheChoiceAndItsReasons) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/short-plan.json";
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan vgg16 --cluster " + SHOAL_SOURCE_DIR +
                           "/examples/mixed-6.yaml -o " + plan,
                       &out),
            0)
      << out;
  EXPECT_LT(std::count(out.begin(), out.end(), '\n'), 40) << out;
  const auto pr = nlohmann::json::parse(ReadPlan(plan)).at("prediction");
  const std::string method = pr.at("method");
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.2f ms",
                pr.at("latency_s").get<double>() * 1e3);
  EXPECT_NE(
      out.find("strategy auto\nchose " + method + ": predicted latency " + ms),
      std::string::npos)
      << out;
  for (const char* line :
       {"slow3 ", "its layers: ", "one-device ", "not a profile",
        "docs/BENCHMARKS.md", "--verbose"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
  EXPECT_EQ(out.find("task device"), std::string::npos) << out;
  if (method != "milp") {
    EXPECT_EQ(out.find("MILP optimal"), std::string::npos) << out;
  }
  // A plan by one strategy is predicted too, and says it was asked for.
  std::string lop;  // RunCommand appends
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --devices 2 --strategy lop", &lop),
            0)
      << lop;
  EXPECT_NE(lop.find("strategy lop\npredicted: latency "), std::string::npos)
      << lop;
  EXPECT_NE(lop.find("strategy lop, as asked"), std::string::npos) << lop;
}

// --verbose: every task, each layer's reason and every candidate, with the
// short answer after them; the MILP's line names the candidate it is of.
TEST(PlanCmd, VerboseShowsEveryTaskAndCandidate) {
  const std::string shoal = SHOAL_BINARY;
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan vgg16 --cluster " + SHOAL_SOURCE_DIR +
                           "/examples/mixed-6.yaml --verbose",
                       &out),
            0)
      << out;
  for (const char* line :
       {"task device        scheme", "alternatives (predicted)",
        "\nwhy:\n  *: auto - auto chose ", "\nchose "}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
  const size_t chose = out.find("auto chose ");
  ASSERT_NE(chose, std::string::npos);
  const std::string why = out.substr(chose, out.find('\n', chose) - chose);
  // A loaded host can leave the MILP no time: then it says only that.
  if (why.rfind("auto chose milp:", 0) != 0 &&
      why.find("MILP not used") == std::string::npos) {
    EXPECT_EQ(why.find("; MILP optimal"), std::string::npos) << why;
    EXPECT_NE(why.find("the milp candidate, not chosen, was MILP"),
              std::string::npos)
        << why;
    EXPECT_NE(out.find("solver of the milp candidate: "), std::string::npos)
        << out;
  }
}

// Without links, fuse-ilp's ILP counts each link alike and the prediction
// prices moving data as free: its reasons do not speak of a link's rate.
TEST(PlanCmd, FuseIlpWithoutLinksSpeaksOfNoRate) {
  const std::string shoal = SHOAL_BINARY;
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan alexnet --devices 4 --strategy "
                               "fuse-ilp --verbose",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("links are unknown"), std::string::npos) << out;
  EXPECT_NE(out.find("links unknown: each counted alike"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("fastest link's rate"), std::string::npos) << out;
}

// fuse-ilp says which objective chose its schemes: the link time by
// default, the paper's total bytes when asked; anything else is refused.
// A zoo model that takes images is planned for 8-bit pixels by default
// (no speedup hangs on remembering a flag), and the plan still runs
// exactly; --float-input opts out, C3D's clips are no image, and the two
// flags together are refused.
TEST(PlanCmd, ZooImageModelsArePlannedForPixelsByDefault) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/pixels_plan.json";
  const std::string base = shoal + " plan lenet5 --cluster " +
                           SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy lop";
  std::string out;
  ASSERT_EQ(RunCommand(base + " -o " + plan, &out), 0) << out;
  EXPECT_NE(ReadPlan(plan).find("\"pixels\": true"), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  ASSERT_EQ(RunCommand(base + " --float-input -o " + plan, &out), 0) << out;
  EXPECT_EQ(ReadPlan(plan).find("\"pixels\": true"), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " plan c3d --devices 2 --strategy pipeline -o " + plan,
                 &out),
      0)
      << out;
  EXPECT_EQ(ReadPlan(plan).find("\"pixels\": true"), std::string::npos);
  out.clear();
  EXPECT_NE(RunCommand(base + " --float-input --image-input", &out), 0);
  EXPECT_NE(out.find("one of --image-input and --float-input"),
            std::string::npos)
      << out;
}

TEST(PlanCmd, FuseIlpSaysItsObjective) {
  const std::string shoal = SHOAL_BINARY;
  const std::string base = shoal + " plan alexnet --cluster " +
                           SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy fuse-ilp --verbose";
  std::string out;
  ASSERT_EQ(RunCommand(base, &out), 0) << out;
  EXPECT_NE(out.find("least link time"), std::string::npos) << out;
  EXPECT_NE(out.find("at the fastest link's rate"), std::string::npos) << out;
  ASSERT_EQ(RunCommand(base + " --fuse-objective bytes", &out), 0) << out;
  EXPECT_NE(out.find("least total communication C"), std::string::npos) << out;
  EXPECT_NE(RunCommand(base + " --fuse-objective time", &out), 0) << out;
  EXPECT_NE(out.find("--fuse-objective"), std::string::npos) << out;
}

// --broadcast scatter: the plan says so, with its smaller chunks, and runs
// exact; an unknown shape is refused, naming the option.
TEST(PlanCmd, BroadcastScatterIsAPlanSetting) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/scatter-plan.json";
  const std::string base = shoal + " plan cifarnet --cluster " +
                           SHOAL_SOURCE_DIR +
                           "/examples/pi3-8.yaml --strategy lcp --branches 8";
  std::string out;
  ASSERT_EQ(RunCommand(base + " --broadcast scatter -o " + plan, &out), 0)
      << out;
  const std::string text = ReadPlan(plan);
  EXPECT_NE(text.find("\"scatter\": true"), std::string::npos);
  EXPECT_NE(text.find("\"chunk_bytes\": 8192"), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  EXPECT_NE(RunCommand(base + " --broadcast star -o " + plan, &out), 0);
  EXPECT_NE(out.find("--broadcast"), std::string::npos) << out;
}

// --broadcast auto (the default): a strategy other than auto scatters; auto
// prices each candidate every way and says which it chose where they differ.
TEST(PlanCmd, BroadcastAutoIsTheDefault) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/bauto-plan.json";
  const std::string cluster =
      std::string(SHOAL_SOURCE_DIR) + "/examples/pi3-8.yaml";
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan cifarnet --cluster " + cluster +
                           " --strategy lcp --branches 8 -o " + plan,
                       &out),
            0)
      << out;
  EXPECT_NE(ReadPlan(plan).find("\"scatter\": true"), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " plan alexnet --cluster " + cluster +
                     " --strategy auto --image-input --verbose -o " + plan,
                 &out),
      0)
      << out;
  EXPECT_NE(out.find("broadcasts "), std::string::npos) << out;
  EXPECT_NE(out.find("scatter "), std::string::npos) << out;
  EXPECT_NE(out.find("direct "), std::string::npos) << out;
}

// --spatial-fc lip: spatial's fc layers split by inputs, each device
// pooling and flattening the channels it gathered from the strips; exact. An
// unknown placement is refused, naming the option.
TEST(PlanCmd, SpatialFcByInputs) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/spatial-lip-plan.json";
  const std::string base = shoal + " plan alexnet --cluster " +
                           SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy spatial";
  std::string out;
  ASSERT_EQ(RunCommand(base + " --spatial-fc lip --verbose -o " + plan, &out),
            0)
      << out;
  EXPECT_NE(out.find("classifier.1: lip - input splitting"), std::string::npos)
      << out;
  // The last pool reads the strips and flattens on each device.
  EXPECT_NE(out.find("MaxPool runs on each device of classifier.1's input "
                     "split"),
            std::string::npos)
      << out;
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  EXPECT_NE(RunCommand(base + " --spatial-fc split -o " + plan, &out), 0);
  EXPECT_NE(out.find("--spatial-fc"), std::string::npos) << out;
}

// --fuse-blocks makes auto's segments-F candidates by hand: whole residual
// blocks fused into segments, exact; a factor below 1 is refused by name.
TEST(PlanCmd, FuseBlocksFusesResidualBlocksIntoSegments) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/segments-plan.json";
  const std::string base = shoal + " plan resnet18 --cluster " +
                           SHOAL_SOURCE_DIR +
                           "/examples/pi3-4.yaml --strategy spatial";
  std::string out;
  ASSERT_EQ(RunCommand(base + " --fuse-blocks 2 --verbose -o " + plan, &out), 0)
      << out;
  EXPECT_NE(out.find("layer1.0.conv1: spatial - a fused segment of"),
            std::string::npos)
      << out;
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  std::string plain;
  ASSERT_EQ(RunCommand(base + " --verbose", &plain), 0) << plain;
  EXPECT_EQ(plain.find("a fused segment"), std::string::npos) << plain;
  EXPECT_NE(RunCommand(base + " --fuse-blocks 0.5 -o " + plan, &out), 0);
  EXPECT_NE(out.find("--fuse-blocks must be at least 1"), std::string::npos)
      << out;
  EXPECT_NE(
      RunCommand(shoal + " plan resnet18 --devices 2 --fuse-blocks 2", &out),
      0);
  EXPECT_NE(out.find("--fuse-blocks goes with --strategy spatial"),
            std::string::npos)
      << out;
}

// lcp without --branches: the Splitter sizes one branch per device of the
// cluster, widths by speed; the plan records the shares, so run rebuilds
// the same model and checks it.
TEST(PlanCmd, LcpSizesBranchesForTheCluster) {
  const std::string shoal = SHOAL_BINARY;
  const std::string dir = ::testing::TempDir();
  const std::string cluster = dir + "/uneven-lcp.yaml",
                    plan = dir + "/uneven-lcp.json";
  {
    std::ofstream f(cluster);
    f << "devices:\n"
         "  - {name: hub, speed: 1, memory: 1GiB}\n"
         "  - {name: fast, speed: 3, memory: 1GiB}\n"
         "  - {name: slow, speed: 1, memory: 1GiB}\n";
  }
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan lenet5 --cluster " + cluster +
                           " --strategy lcp -o " + plan,
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("3 unequal branches sized by the Splitter for fast"),
            std::string::npos)
      << out;
  const std::string text = ReadPlan(plan);
  EXPECT_NE(text.find("\"lcp_shares\""), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  // The Splitter alone, its steps and the choice.
  ASSERT_EQ(RunCommand(shoal + " lcp split lenet5 --cluster " + cluster, &out),
            0)
      << out;
  EXPECT_NE(out.find("K=3: fast"), std::string::npos) << out;
  EXPECT_NE(out.find("the most that fit"), std::string::npos) << out;
  ASSERT_NE(
      RunCommand(shoal + " lcp split lenet5 --branches 2 --cluster " + cluster,
                 &out),
      0);
  EXPECT_NE(out.find("give one of"), std::string::npos) << out;
}

// --dtype int8: the quantized model is written beside the plan, which
// names it; `run --check` gives the int8 model's one-device output, with
// the quantized activations sent as int8. Without -o it says why.
TEST(PlanCmd, Int8WritesTheModelBesideThePlan) {
  const std::string shoal = SHOAL_BINARY;
  onnx_test::TempDir dir;
  Tensor samples({4, 1, 28, 28});
  for (size_t i = 0; i < samples.data.size(); ++i)
    samples.data[i] = static_cast<float>(i % 97) / 96.f;
  const std::string cal = dir.File("cal.npy"), plan = dir.File("p.json");
  ASSERT_TRUE(WriteNpy(cal, samples).ok());
  const std::string base = shoal + " plan lenet5 --devices 3 --strategy lop " +
                           "--dtype int8 --calibration " + cal;
  std::string out;
  ASSERT_EQ(RunCommand(base + " -o " + plan, &out), 0) << out;
  EXPECT_NE(out.find("p.int8.onnx: 5 layers with int8 weights"),
            std::string::npos)
      << out;
  const std::string json = ReadPlan(plan);
  EXPECT_NE(json.find("p.int8.onnx"), std::string::npos);
  EXPECT_NE(json.find("\"int8\": true"), std::string::npos);
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  EXPECT_NE(RunCommand(base, &out), 0);
  EXPECT_NE(out.find("--dtype int8 needs -o"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
