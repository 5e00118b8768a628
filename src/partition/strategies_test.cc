// Every strategy on the small zoo models, 2 to 8 devices, equal and unequal:
// exact against the one-device run, communication equal to the formula.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "models/builder.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"
#include "plan/plan_cost.h"
#include "plan/task_weights.h"

namespace shoal {
namespace {

using testing::Devices;
using testing::EqualDevices;
using testing::RunPlanExact;

Model Load(const std::string& name) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  auto m = LoadModel(name, lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

// The model `b` built, with output x and random weights.
Model Built(GraphBuilder& b, const std::string& x, uint64_t seed) {
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, seed);
  return m;
}

// Whether task t runs a node whose op has the split fact `fact` (in the
// op registry: per_channel for a pool, relayout for a flatten).
bool Runs(const Task& t, bool SplitFacts::*fact) {
  for (const auto& n : t.fragment.nodes) {
    if (SplitFactsOf(n.op).*fact) return true;
  }
  return false;
}

// m planned by spatial on `devices` equal devices with its fc layers placed
// by `fc`, run and checked against one device.
bool SpatialPlanExact(const Model& m, int devices, SpatialFc fc,
                      testing::PlanRunResult* r) {
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = EqualDevices(devices);
  po.model.spec = m.graph.name;
  po.spatial_fc = fc;
  return RunPlanExact(m, po, r);
}

// The fully-distributed paper's running example (Fig. 1): fc 4-8-16-4-4,
// no biases, ReLU between.
Model PaperExample() {
  GraphBuilder b("paper-4-layer");
  std::string x = b.Input("x", {1, 4});
  x = b.Relu(b.Linear("l1", x, 8, false));
  x = b.Relu(b.Linear("l2", x, 16, false));
  x = b.Relu(b.Linear("l3", x, 4, false));
  x = b.Linear("l4", x, 4, false);
  return Built(b, x, 3);
}

TEST(PaperExample, CountsOfFigures4To7) {
  const Model m = PaperExample();
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"lop", 34}, {"lip", 48}, {"fuse", 40}, {"fuse-ilp", 22}};
  for (const auto& [strategy, c] : want) {
    // The papers' execution model: partial sums go to the input device.
    PlanOptions po;
    po.strategy = strategy;
    po.devices = EqualDevices(2);
    po.model.spec = m.graph.name;
    po.reduce_on_peers = false;
    po.fuse_objective = FuseObjective::kBytes;  // and their objective
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, po, &r)) << strategy;
    EXPECT_EQ(r.stats.elements_total, c) << strategy;
    // Reduced among the devices, they move no more.
    po.reduce_on_peers = true;
    testing::PlanRunResult peers;
    ASSERT_TRUE(RunPlanExact(m, po, &peers)) << strategy;
    EXPECT_LE(peers.stats.elements_total, c) << strategy;
    auto cost = ComputePlanCost(r.plan, m.graph);
    ASSERT_TRUE(cost.ok());
    // F = 240/2 weights per device, T = 240/2 multiplications.
    EXPECT_EQ(cost.value().max_weight_bytes_per_device(), 120 * 4) << strategy;
    EXPECT_EQ(cost.value().macs_longest_path, 120) << strategy;
  }
  PlanOptions paper;
  paper.strategy = "fuse-ilp";
  paper.devices = EqualDevices(2);
  paper.model.spec = m.graph.name;
  paper.fuse_objective = FuseObjective::kBytes;
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, paper, &r));
  std::vector<std::string> schemes;
  for (const auto& d : r.plan.decisions) {
    if (d.layer[0] == 'l') schemes.push_back(d.scheme);  // the fc layers
  }
  EXPECT_EQ(schemes,
            (std::vector<std::string>{"lop", "fuse1", "fuse2", "lop"}));
  // Layer by layer as in Fig. 4: 8 + 12 + 10 + 4.
  ASSERT_TRUE(RunPlanExact(m, "lop", EqualDevices(2), &r));
  EXPECT_EQ(r.stats.elements_per_layer["l1"], 8);
  EXPECT_EQ(r.stats.elements_per_layer["l2"], 12);
  EXPECT_EQ(r.stats.elements_per_layer["l3"], 10);
  EXPECT_EQ(r.stats.elements_per_layer["l4"], 4);
}

TEST(PaperExample, TrafficPerLinkAddsUpToTheCountedBytes) {
  const Model m = PaperExample();
  for (const std::string s : {"lop", "lip", "fuse-ilp"}) {
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, s, EqualDevices(3), &r)) << s;
    const auto links = TrafficPerLink(r.plan);
    std::vector<int64_t> sent(3, 0);
    int64_t total = 0;
    for (size_t i = 0; i < links.size(); ++i) {
      EXPECT_NE(links[i].from, links[i].to);
      EXPECT_GT(links[i].transfers, 0);
      if (i > 0) {
        EXPECT_LE(links[i].bytes, links[i - 1].bytes) << s;
      }
      sent[links[i].from] += links[i].bytes;
      total += links[i].bytes;
    }
    EXPECT_EQ(total, r.stats.bytes_total) << s;
    EXPECT_EQ(sent, r.stats.bytes_sent) << s;
  }
}

class SmallModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallModels, EveryStrategyIsExact) {
  const Model m = Load(GetParam());
  const std::vector<std::vector<double>> clusters = {{1, 1},
                                                     {1, 1, 1},
                                                     {1, 1, 1, 1},
                                                     {1, 1, 1, 1, 1, 1},
                                                     {1, 1, 1, 1, 1, 1, 1, 1},
                                                     {3, 1},
                                                     {1, 2, 4},
                                                     {2, 1, 1, 1, 1, 3}};
  testing::ExpectEveryStrategyExact(m, clusters);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SmallModels,
                         ::testing::Values("lenet5", "lenet-fc", "cifarnet"));

// Two residual blocks, the second with a strided 1x1 shortcut, as ResNet's.
Model ResidualBlocks(int64_t size = 24) {
  GraphBuilder b("residual-blocks");
  std::string x =
      b.Relu(b.Conv("stem", b.Input("x", {1, 3, size, size}), 8, 3, 1, 1));
  std::string y = b.Relu(b.Conv("a1", x, 8, 3, 1, 1));
  x = b.Relu(b.Add(b.Conv("a2", y, 8, 3, 1, 1), x));
  y = b.Relu(b.Conv("b1", x, 16, 3, 2, 1));
  x = b.Relu(b.Add(b.Conv("b2", y, 16, 3, 1, 1), b.Conv("down", x, 16, 1, 2)));
  x = b.Linear("fc", b.Flatten(b.GlobalAvgPool(x)), 10);
  return Built(b, x, 5);
}

TEST(Strategies, ResidualAddsRunOnTheirPartsNotOnTheInputDevice) {
  const Model m = ResidualBlocks();
  for (const std::string strategy : {"spatial", "lop"}) {
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, strategy, EqualDevices(4), &r)) << strategy;
    // A spatial strip may run as several parts (its interior and the edges
    // that wait for a neighbour's halo); count each add once per device.
    std::set<std::pair<std::string, int>> adds;
    for (const auto& t : r.plan.tasks) {
      for (const auto& n : t.fragment.nodes) {
        if (n.op != "Add") continue;
        adds.insert({n.name, t.devices[0]});
        // Every part's add reads its own rows or channels: a device computes
        // its share, never the whole tensor.
        const auto& shape = t.fragment.FindTensor(n.outputs[0])->shape;
        const auto& whole = m.graph.tensors.at(n.outputs[0]).shape;
        EXPECT_NE(shape, whole) << strategy << " " << t.name;
      }
    }
    EXPECT_EQ(adds.size(), 8u) << strategy;  // 2 adds x 4 devices
  }
}

std::map<std::string, std::set<int>> ConvDevices(const Plan& p) {
  std::map<std::string, std::set<int>> devices_of;
  for (const auto& t : p.tasks) {
    for (const auto& n : t.fragment.nodes) {
      if (n.op == "Conv") devices_of[n.name].insert(t.devices[0]);
    }
  }
  return devices_of;
}

TEST(Strategies, SpatialRunsLayersWithFewerRowsThanDevicesOnSomeOfThem) {
  // 8 devices; the second block's maps have 5 rows. As strips, they run on
  // five devices, one row each.
  const Model m = ResidualBlocks(9);
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "spatial", EqualDevices(8), &r));
  auto devices_of = ConvDevices(r.plan);
  EXPECT_EQ(devices_of["stem"].size(), 8u);
  EXPECT_EQ(devices_of["b1"].size(), 5u);
  EXPECT_EQ(devices_of["b2"].size(), 5u);
}

// PlanOptions::spatial_devices: strips on devices 0, 2 and 5 of six, with
// their fc layers split by inputs over the same three; the others hold
// nothing, and the plan is exact. On 2-D tiles too; a device named twice
// or out of range is refused by name.
TEST(Strategies, SpatialRunsOnTheDevicesItIsGiven) {
  const Model m = Load("alexnet");
  for (TileShape tiles : {TileShape::kStrips, TileShape::k2D}) {
    PlanOptions po;
    po.strategy = "spatial";
    po.devices = EqualDevices(6);
    po.model.spec = m.graph.name;
    po.spatial_fc = SpatialFc::kLip;
    po.tiles = tiles;
    po.spatial_devices = {0, 2, 5};
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, po, &r));
    std::set<int> used;
    for (const auto& t : r.plan.tasks)
      used.insert(t.devices.begin(), t.devices.end());
    used.erase(-1);
    EXPECT_EQ(used, (std::set<int>{0, 2, 5}));
    // fc7, split by inputs, has a part on device 5.
    bool fc_split = false;
    for (const auto& t : r.plan.tasks) {
      for (const auto& n : t.fragment.nodes)
        fc_split |= n.name == "classifier.4" && t.devices[0] == 5;
    }
    EXPECT_TRUE(fc_split);
  }
  for (const std::vector<int>& bad :
       {std::vector<int>{0, 0}, std::vector<int>{1, 6},
        std::vector<int>{2, 1}}) {
    PlanOptions po;
    po.strategy = "spatial";
    po.devices = EqualDevices(6);
    po.spatial_devices = bad;
    auto p = MakePlan(m.graph, po);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("spatial devices"), std::string::npos)
        << p.status().message();
  }
}

TEST(Strategies, SpatialRunsMapsWithFewerRowsThanDevicesOn2DTiles) {
  // The same model on 2-D tiles: the 5-row maps are cut into columns too,
  // so every device takes a part of them.
  const Model m = ResidualBlocks(9);
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = EqualDevices(8);
  po.model.spec = m.graph.name;
  po.tiles = TileShape::k2D;
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, po, &r));
  auto devices_of = ConvDevices(r.plan);
  EXPECT_EQ(devices_of["b1"].size(), 8u);
  EXPECT_EQ(devices_of["b2"].size(), 8u);
  bool said = false;
  for (const auto& d : r.plan.decisions)
    said = said || (d.layer == "b1" && d.reason.find("2-D tiles") == 0);
  EXPECT_TRUE(said);
  // No tile spans every column of b1's output.
  for (const auto& t : r.plan.tasks) {
    if (t.layer != "b1") continue;
    const Shape& s = t.fragment.FindTensor("b1")->shape;
    EXPECT_LT(s[3], 5) << t.name;
  }
}

// Three 3x3 convs with ReLUs on a 3 x rows x cols input.
Model ThreeConvs(int64_t rows, int64_t cols, uint64_t seed) {
  GraphBuilder b("three-convs");
  std::string x = b.Input("x", {1, 3, rows, cols});
  x = b.Relu(b.Conv("c1", x, 4, 3, 1, 1));
  x = b.Relu(b.Conv("c2", x, 4, 3, 1, 1));
  x = b.Relu(b.Conv("c3", x, 4, 3, 1, 1));
  return Built(b, x, seed);
}

using PartsOf = std::map<std::pair<std::string, int>, std::vector<int>>;

// `m` planned spatially on four devices with a halo exchange after every
// conv, checked exact; the task ids of each (layer, device), in id order.
PartsOf HaloAfterEveryConv(const Model& m, bool overlap, TileShape tiles,
                           testing::PlanRunResult* r) {
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = EqualDevices(4);
  po.model.spec = m.graph.name;
  po.max_read_factor = 1.0;  // a halo exchange after every conv
  po.overlap_halos = overlap;
  po.tiles = tiles;
  EXPECT_TRUE(RunPlanExact(m, po, r)) << overlap;
  PartsOf parts;
  for (const auto& t : r->plan.tasks)
    parts[{t.layer, t.devices[0]}].push_back(t.id);
  return parts;
}

// The last part of each (layer, device) is its interior: it reads only what
// its own device computed for the layer before, not what an edge received.
void ExpectInteriorsReadOnlyTheirOwnDevice(const Plan& p, const PartsOf& parts,
                                           const std::string& layer) {
  for (int d = 0; d < 4; ++d) {
    const int interior = parts.at({layer, d}).back();
    for (const auto& x : p.transfers) {
      if (x.dst.task != interior || x.src.task < 0) continue;
      EXPECT_EQ(p.DeviceOf(x.src.task, 0), d) << layer << "@" << d;
      EXPECT_NE(p.tasks[x.src.task].layer, layer)
          << layer << "@" << d << " waits for its own edge";
    }
  }
}

// 2x2 tiles with a halo exchange after every conv: each tile takes rows
// from the tile above or below, columns from the one beside, and a corner
// from the one across; with overlap it computes its interior meanwhile.
TEST(Strategies, Spatial2DTilesTakeTheirHaloFromEveryNeighbour) {
  const Model m = ThreeConvs(16, 16, 3);
  for (bool overlap : {true, false}) {
    testing::PlanRunResult r;
    PartsOf parts = HaloAfterEveryConv(m, overlap, TileShape::k2D, &r);
    if (HasFailure()) return;
    if (overlap) ExpectInteriorsReadOnlyTheirOwnDevice(r.plan, parts, "c2");
    for (int d = 0; d < 4; ++d) {
      // A corner tile has one neighbour below or above and one beside:
      // with overlap, a band of rows, a band of columns and the interior.
      const auto& ids = parts[std::make_pair(std::string("c2"), d)];
      EXPECT_EQ(ids.size(), overlap ? 3u : 1u) << "c2@" << d;
      // It reads from all three other tiles (the one across for a corner).
      std::set<int> from;
      for (const auto& t : r.plan.transfers) {
        if (t.src.task < 0 || t.dst.task < 0) continue;
        if (r.plan.tasks[t.dst.task].layer != "c2") continue;
        if (r.plan.DeviceOf(t.dst.task, 0) != d) continue;
        const int s = r.plan.DeviceOf(t.src.task, 0);
        if (s != d) from.insert(s);
      }
      EXPECT_EQ(from.size(), 3u) << "c2@" << d;
    }
  }
}

// With halo overlap a strip that reads a neighbour's rows runs as its
// interior, computed from its own rows only, and the edges that wait for the
// halo; without, as one task. Both are exact.
TEST(Strategies, SpatialStripsComputeTheirInteriorWhileTheHaloTravels) {
  const Model m = ThreeConvs(32, 16, 1);
  for (bool overlap : {true, false}) {
    testing::PlanRunResult r;
    PartsOf parts = HaloAfterEveryConv(m, overlap, TileShape::kStrips, &r);
    if (HasFailure()) return;
    // c1 reads the input from the hub: one strip per device.
    for (int d = 0; d < 4; ++d) {
      const std::vector<int>& c1 = parts[std::make_pair("c1", d)];
      EXPECT_EQ(c1.size(), 1u);
    }
    for (const std::string layer : {"c2", "c3"}) {
      for (int d = 0; d < 4; ++d) {
        const size_t edges = (d > 0) + (d < 3);
        const std::vector<int>& ids = parts[std::make_pair(layer, d)];
        EXPECT_EQ(ids.size(), overlap ? 1 + edges : 1) << layer << "@" << d;
      }
      if (overlap) ExpectInteriorsReadOnlyTheirOwnDevice(r.plan, parts, layer);
    }
  }
}

// The convs each task of `p` runs, by task.
std::vector<std::set<std::string>> ConvsPerTask(const Plan& p) {
  std::vector<std::set<std::string>> out;
  for (const auto& t : p.tasks) {
    std::set<std::string> convs;
    for (const auto& n : t.fragment.nodes)
      if (n.op == "Conv") convs.insert(n.name);
    out.push_back(convs);
  }
  return out;
}

// Deep chains everywhere but the one that reads the model input: c1 runs
// alone and exchanges its halo, c2 and c3 run as one chain; without the
// input's own factor the three fuse. Both exact.
TEST(Strategies, SpatialChainReadingTheInputStaysShallow) {
  const Model m = ThreeConvs(32, 16, 1);
  for (double in : {-1.0, 1.0}) {
    PlanOptions po;
    po.strategy = "spatial";
    po.devices = EqualDevices(4);
    po.model.spec = m.graph.name;
    po.max_read_factor = 10;
    po.input_read_factor = in;
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, po, &r)) << in;
    bool c1_alone = false, c2_with_c3 = false, c1_with_c2 = false;
    for (const auto& convs : ConvsPerTask(r.plan)) {
      c1_alone |= convs == std::set<std::string>{"c1"};
      c2_with_c3 |= convs == std::set<std::string>{"c2", "c3"};
      c1_with_c2 |= convs.count("c1") && convs.count("c2");
    }
    EXPECT_EQ(c1_alone, in >= 0) << in;
    EXPECT_EQ(c2_with_c3, in >= 0) << in;
    EXPECT_EQ(c1_with_c2, in < 0) << in;
  }
}

// c2 and c3 as one chain on strips of 8 rows: cut for overlap, the edges
// and the interior together compute 22 rows of the 18 the strip does
// uncut (1.22x), so by default it waits for its halo whole, and with
// max_overlap_recompute 2 a middle strip runs as two edges and an
// interior. Both exact.
TEST(Strategies, SpatialOverlapRecomputesAsMuchAsAllowed) {
  const Model m = ThreeConvs(32, 16, 1);
  for (double ov : {kDefaultOverlapRecompute, 2.0}) {
    PlanOptions po;
    po.strategy = "spatial";
    po.devices = EqualDevices(4);
    po.model.spec = m.graph.name;
    po.max_read_factor = 10;
    po.input_read_factor = 1.0;
    po.max_overlap_recompute = ov;
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, po, &r)) << ov;
    std::map<int, int> c2_tasks;  // by device
    for (const auto& t : r.plan.tasks)
      if (t.layer == "c2") ++c2_tasks[t.devices[0]];
    for (int d = 0; d < 4; ++d) {
      const int edges = (d > 0) + (d < 3);
      EXPECT_EQ(c2_tasks[d], ov > 1.5 ? 1 + edges : 1) << ov << " " << d;
    }
  }
}

TEST(Strategies, SpatialDropsAStripNoLaterLayerReads) {
  // A 2x2 pool on 9 rows reads rows 0-7: the strip of row 8 is dropped.
  GraphBuilder b("odd-rows");
  std::string x = b.Relu(b.Conv("c", b.Input("x", {1, 2, 9, 9}), 4, 3, 1, 1));
  x = b.Linear("fc", b.Flatten(b.MaxPool(x, {2, 2}, {2, 2})), 3);
  const Model m = Built(b, x, 2);
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "spatial", EqualDevices(8), &r));
  int strips = 0;
  for (const auto& t : r.plan.tasks) {
    for (const auto& n : t.fragment.nodes) strips += n.op == "Conv";
    EXPECT_FALSE(t.fragment.outputs.empty()) << t.name;
  }
  EXPECT_EQ(strips, 7);  // of 8: rows 0-7 in 7 strips, row 8 in none
}

// Two fc layers after strips of rows, split by inputs (--spatial-fc lip):
// each device multiplies its own strip of the last map, flattened, by the
// weight's columns for those rows (plan_builder_boxes.cc), so nothing of
// the map moves between devices, and the partial sums are reduced on the
// devices (fc2 reads its slice where it is summed).
TEST(Strategies, SpatialFcByInputsMultipliesEachStripWhereItLies) {
  GraphBuilder b("strips-then-fc");
  std::string x = b.Relu(b.Conv("c", b.Input("x", {1, 3, 16, 16}), 8, 3, 1, 1));
  x = b.MaxPool(x, {2, 2}, {2, 2});
  const std::string pooled = x;
  x = b.Relu(b.Linear("fc1", b.Flatten(x), 12));
  x = b.Linear("fc2", x, 5);
  const Model m = Built(b, x, 4);
  testing::PlanRunResult r;
  ASSERT_TRUE(SpatialPlanExact(m, 4, SpatialFc::kLip, &r));
  const Plan& p = r.plan;
  std::set<int> fc1_devices;
  for (const auto& t : p.tasks) {
    bool fc1 = false;
    for (const auto& n : t.fragment.nodes) fc1 |= n.name == "fc1";
    if (!fc1) continue;
    fc1_devices.insert(p.DeviceOf(t.id, 0));
    // Its weight through a view of [12, 8, 8, 8], rows of its strip.
    bool viewed = false;
    for (const auto& w : t.weights) viewed |= w.view == Shape({12, 8, 8, 8});
    EXPECT_TRUE(viewed) << t.name;
    // The pooled map it reads was computed in the task itself.
    for (const auto& tr : p.transfers) {
      EXPECT_FALSE(tr.dst.task == t.id && tr.dst.tensor == pooled) << t.name;
    }
  }
  EXPECT_EQ(fc1_devices.size(), 4u);
  // fc1's partial sums are reduced on the devices, none whole on the hub.
  for (const auto& t : p.tasks) EXPECT_NE(t.scheme, "merge") << t.name;
}

// Three fc layers after strips, all but the last split by inputs
// (--spatial-fc lip-last-whole): the last runs whole on the input device,
// where the second's partial sums are added as they arrive (no reduce
// among the devices to be gathered again), and the ReLU between them runs
// there too.
TEST(Strategies, SpatialFcLastWholeAddsTheSumsBeforeItOnTheInputDevice) {
  GraphBuilder b("strips-then-three-fc");
  std::string x = b.Relu(b.Conv("c", b.Input("x", {1, 3, 16, 16}), 8, 3, 1, 1));
  x = b.MaxPool(x, {2, 2}, {2, 2});
  x = b.Relu(b.Linear("fc1", b.Flatten(x), 12));
  x = b.Relu(b.Linear("fc2", x, 10));
  x = b.Linear("fc3", x, 5);
  const Model m = Built(b, x, 4);
  testing::PlanRunResult r;
  ASSERT_TRUE(SpatialPlanExact(m, 4, SpatialFc::kLipLastWhole, &r));
  const Plan& p = r.plan;
  int fc1 = 0, fc2 = 0, fc3 = 0, reduces = 0;
  for (const auto& t : p.tasks) {
    // fc1 runs in each strip's own task, on the rows it computed.
    for (const auto& n : t.fragment.nodes) fc1 += n.name == "fc1";
    if (t.layer == "fc2") ++fc2;
    if (t.scheme == "reduce") ++reduces;
    for (const auto& n : t.fragment.nodes) {
      if (n.name != "fc3") continue;
      ++fc3;
      EXPECT_EQ(p.DeviceOf(t.id, 0), 0) << t.name;
      // fc2's partial sums arrive here, one message from each device.
      int sums = 0;
      for (const auto& tr : p.transfers)
        sums += tr.dst.task == t.id && tr.merge == Merge::kSum;
      EXPECT_EQ(sums, 4) << t.name;
    }
  }
  EXPECT_EQ(fc1, 4);
  EXPECT_EQ(fc2, 4);
  EXPECT_EQ(fc3, 1);
  // fc1's sums are reduce-scattered (fc2 reads its slices where they are
  // summed), fc2's are not.
  EXPECT_EQ(reduces, 4);
}

// A last pool with fewer rows than devices (AlexNet's, 6 rows on eight)
// before fc layers split by inputs: each device gathers its channels of
// the pool's input from every strip and pools them itself, so no strip of
// the pool exchanges a halo first.
TEST(Strategies, SpatialFcByInputsPoolsItsChannelsWhereItFlattensThem) {
  GraphBuilder b("strips-pool-fc");
  std::string x = b.Relu(b.Conv("c", b.Input("x", {1, 3, 16, 16}), 8, 3, 1, 1));
  x = b.MaxPool(x, {3, 3}, {2, 2});  // 7 rows
  x = b.Relu(b.Linear("fc1", b.Flatten(x), 12));
  x = b.Linear("fc2", x, 5);
  const Model m = Built(b, x, 8);
  testing::PlanRunResult r;
  ASSERT_TRUE(SpatialPlanExact(m, 8, SpatialFc::kLip, &r));
  const Plan& p = r.plan;
  int pools = 0;
  for (const auto& t : p.tasks) {
    if (!Runs(t, &SplitFacts::per_channel)) continue;
    ++pools;
    EXPECT_TRUE(Runs(t, &SplitFacts::relayout))
        << t.name << " pools but does not flatten";
    // Its inputs come from the conv's strips, none from another pool.
    for (const auto& tr : p.transfers) {
      if (tr.dst.task != t.id || tr.src.task < 0) continue;
      EXPECT_FALSE(Runs(p.tasks[tr.src.task], &SplitFacts::per_channel))
          << t.name;
    }
  }
  EXPECT_EQ(pools, 8);  // one per device of fc1's input split
  // Without the fc split by inputs, the pool is a chain of strips.
  ASSERT_TRUE(SpatialPlanExact(m, 8, SpatialFc::kWhole, &r));
  bool strip_pool = false;
  for (const auto& t : r.plan.tasks) {
    strip_pool |= t.scheme == "spatial" && Runs(t, &SplitFacts::per_channel);
  }
  EXPECT_TRUE(strip_pool);
}

TEST(Strategies, UnknownStrategyListsTheValidOnes) {
  const Model m = Load("lenet5");
  PlanOptions po;
  po.strategy = "magic";
  po.devices = EqualDevices(2);
  auto p = MakePlan(m.graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("fuse-ilp"), std::string::npos);
}

TEST(Strategies, TooManyDevicesForRowsNamesTheLayer) {
  const Model m = Load("lenet-fc");
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = EqualDevices(2);
  auto p = MakePlan(m.graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("spatial"), std::string::npos);
}

TEST(Strategies, MoreDevicesThanChannelsKeepsTheLayerWholeAndSaysWhy) {
  const Model m = Load("lenet5");  // conv1 has 6 output channels
  PlanOptions po;
  po.strategy = "channel";
  po.devices = EqualDevices(8);
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  bool said = false;
  for (const auto& d : p.value().decisions) {
    if (d.layer == "conv1") {
      EXPECT_EQ(d.scheme, "whole");
      said = d.reason.find("6 outputs cannot be split over 8 devices") !=
             std::string::npos;
    }
  }
  EXPECT_TRUE(said);
}

TEST(Strategies, PipelineBalancesStagesByMacs) {
  const Model m = Load("lenet5");
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "pipeline", EqualDevices(3), &r));
  auto cost = ComputePlanCost(r.plan, m.graph);
  ASSERT_TRUE(cost.ok());
  int64_t total = 0, most = 0;
  for (int64_t v : cost.value().macs_per_device) {
    total += v;
    most = std::max(most, v);
    EXPECT_GT(v, 0);
  }
  // No stage holds everything; T of a pipeline is the whole model.
  EXPECT_LT(most, total);
  EXPECT_EQ(cost.value().macs_longest_path, total);
}

TEST(Strategies, DataParallelDealsRequestsRoundRobin) {
  const Model m = Load("lenet5");
  PlanOptions po;
  po.strategy = "data";
  po.devices = EqualDevices(3);
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(CountCommunication(p.value(), 0).elements_total, 0);
  // Request 1 runs on device 1: the input goes there, the output comes back.
  EXPECT_EQ(
      CountCommunication(p.value(), 1).elements_total,
      NumElements(p.value().input_shape) + NumElements(p.value().output_shape));
}

TEST(Strategies, DataParallelDealsUnequalDevicesBySpeed) {
  const Model m = Load("lenet5");
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "data", Devices({4, 1}), &r));
  const Task& t = r.plan.tasks.at(0);
  EXPECT_EQ(t.devices, (std::vector<int>{0, 0, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(t.Share(0), 0.8);
  EXPECT_EQ(t.Replicas(), (std::vector<int>{0, 1}));
  // Request 2 is the slow device's turn; the fast one holds the weights once.
  EXPECT_EQ(r.plan.DeviceOf(t.id, 2), 1);
  const auto wb = WeightBytesPerDevice(r.plan);
  EXPECT_EQ(wb[0], wb[1]);
  auto cost = ComputePlanCost(r.plan, m.graph);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost.value().weight_bytes_per_device[0],
            cost.value().weight_bytes_per_device[1]);
  EXPECT_NE(r.plan.decisions.back().reason.find("dev0 4, dev1 1 of every 5"),
            std::string::npos)
      << r.plan.decisions.back().reason;
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// Every strategy registers itself, planner/'s included, in the order the
// CLI lists them; a name that is none is refused naming them all.
TEST(StrategyRegistry, ListsEveryStrategyInOrderAndRefusesOthers) {
  EXPECT_EQ(StrategyNames(),
            (std::vector<std::string>{"auto", "procedure1", "pipeline", "data",
                                      "lop", "lip", "channel", "filter",
                                      "spatial", "fuse", "fuse-ilp", "lcp",
                                      "random", "heads", "windows"}));
  for (const auto& n : StrategyNames()) {
    EXPECT_NE(StrategyRegistry::Global().Find(n), nullptr) << n;
  }
  EXPECT_EQ(StrategyRegistry::Global().Find("lopp"), nullptr);
  PlanOptions po;
  po.strategy = "lopp";
  po.devices = testing::EqualDevices(2);
  auto p = MakePlan(Load("lenet5").graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find("fuse-ilp"), std::string::npos)
      << p.status().message();
}

}  // namespace
}  // namespace shoal
