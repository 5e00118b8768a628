// `shoal cost MODEL --devices N --strategy S`: F, T and C of a strategy's
// Plan, per layer, counted from the Plan (and, for the fully-distributed
// paper's schemes, its formulas, which must agree).
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/plan_common.h"
#include "graph/cost.h"
#include "partition/plan_formula.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"
#include "plan/task_weights.h"
#include "util/units.h"

namespace shoal {
namespace {

struct CostArgs {
  std::string model, strategy, input_shape;
  int hub = 0;
  bool json = false;
  std::string reduce = "peers";
  std::string fuse_objective = "link";
  std::string tiles = "strips";
  DeviceFlags devices;
};

// Everything `cost` reports, computed once for the JSON and the text.
struct CostReport {
  Cluster cluster;
  Plan plan;
  PlanCost cost;
  StatusOr<int64_t> formula = Unsupported("not computed");
  // What each worker needs, by the rule the planners and workers use.
  std::vector<int64_t> need;
  size_t fullest = 0;
  Status fits;
  // Traffic per link and per uplink (what a device sends, over its one
  // radio): the busiest uplink, not the total, bounds the time. What each
  // device receives: on a radio that carries its uplink and its downlink
  // at the link's rate, a device that every partial sum goes to is bound
  // by this side.
  std::vector<LinkTraffic> links;
  std::vector<int64_t> up_bytes, down_bytes;
  std::vector<int> up_transfers;
  std::vector<double> up_seconds;  // at the link's bandwidth; 0 when free
  size_t busiest = 0, busiest_down = 0;
};

StatusOr<Plan> CostPlan(const CostArgs& a, const Cluster& cluster, Model* m) {
  PlanOptions po;
  po.strategy = a.strategy;
  po.devices = cluster.PlanDevices();
  po.hub = a.hub;
  po.reduce_on_peers = a.reduce == "peers";
  po.fuse_objective = a.fuse_objective == "bytes" ? FuseObjective::kBytes
                                                  : FuseObjective::kLinkTime;
  ASSIGN_OR_RETURN(po.tiles, ParseTileShape(a.tiles));
  po.link_rates = cluster.UplinkRates();
  po.link_latency_s = cluster.MaxLinkLatency();
  po.model.spec = a.model;
  ASSIGN_OR_RETURN(auto shape, ParseInputShapeFlag(a.input_shape));
  if (shape) po.model.input_shape = *shape;
  ASSIGN_OR_RETURN(*m, LoadPlanModel(po.model, false));
  return MakePlan(m->graph, po);
}

void CountMemory(const Graph& g, CostReport* r) {
  const Plan& p = r->plan;
  const auto wb = WeightBytesPerDevice(p);
  const auto largest = LargestWeightPerDevice(p);
  const auto act = PeakActivationPerDevice(p);
  r->need.assign(p.devices.size(), 0);
  for (size_t d = 0; d < r->need.size(); ++d) {
    r->need[d] = DeviceWeightMemory(wb[d], largest[d]) + act[d];
    if (r->need[d] > r->need[r->fullest]) r->fullest = d;
  }
  r->fits = CheckPlanMemory(p, g);
}

void CountLinks(CostReport* r) {
  const size_t n = r->plan.devices.size();
  r->links = TrafficPerLink(r->plan);
  r->up_bytes.assign(n, 0);
  r->down_bytes.assign(n, 0);
  r->up_transfers.assign(n, 0);
  for (const auto& l : r->links) {
    r->up_bytes[l.from] += l.bytes;
    r->up_transfers[l.from] += l.transfers;
    r->down_bytes[l.to] += l.bytes;
  }
  r->up_seconds.assign(n, 0);
  for (size_t d = 0; d < n && d < r->cluster.devices.size(); ++d) {
    const double bps = r->cluster.devices[d].link.bandwidth_bps;
    if (bps > 0) r->up_seconds[d] = r->up_bytes[d] * 8.0 / bps;
  }
  for (size_t d = 0; d < n; ++d) {
    if (r->down_bytes[d] > r->down_bytes[r->busiest_down]) r->busiest_down = d;
    const size_t b = r->busiest;
    const bool more = r->up_seconds[d] != r->up_seconds[b]
                          ? r->up_seconds[d] > r->up_seconds[b]
                          : r->up_bytes[d] > r->up_bytes[b];
    if (more) r->busiest = d;
  }
}

StatusOr<CostReport> ComputeCost(const CostArgs& a) {
  CostReport r;
  ASSIGN_OR_RETURN(r.cluster, a.devices.ResolveCluster());
  Model m;
  ASSIGN_OR_RETURN(r.plan, CostPlan(a, r.cluster, &m));
  ASSIGN_OR_RETURN(r.cost, ComputePlanCost(r.plan, m.graph));
  r.formula = FormulaCommunication(r.plan, m.graph);
  CountMemory(m.graph, &r);
  CountLinks(&r);
  return r;
}

// On a shared medium every byte between two devices takes the one
// channel twice (up to the access point and down), whichever link it is.
double MediumAirtime(const CostReport& r) {
  int64_t bytes = 0;
  for (int64_t b : r.up_bytes) bytes += b;
  return r.cluster.network.Airtime(bytes);
}

nlohmann::json CostJson(const CostArgs& a, const CostReport& r) {
  const Plan& p = r.plan;
  const PlanCost& c = r.cost;
  nlohmann::json j;
  j["strategy"] = a.strategy;
  j["devices"] = r.cluster.devices.size();
  j["layers"] = nlohmann::json::array();
  for (const auto& l : c.layers) {
    j["layers"].push_back(
        {{"name", l.name},
         {"scheme", l.scheme},
         {"communication_elements", l.communication_elements},
         {"communication_bytes", l.communication_elements * kBytesPerElement},
         {"weight_elements_per_device", l.weight_elements_per_device},
         {"macs_per_device", l.macs_per_device}});
  }
  j["total"] = {
      {"communication_elements", c.communication_elements},
      {"communication_bytes", c.communication_elements * kBytesPerElement},
      {"max_weight_bytes_per_device", c.max_weight_bytes_per_device()},
      {"weight_bytes_per_device", c.weight_bytes_per_device},
      {"macs_longest_path", c.macs_longest_path},
      {"memory_bytes_per_device", r.need},
      {"fits_memory", r.fits.ok()}};
  if (r.formula.ok()) {
    j["total"]["formula_communication_elements"] = r.formula.value();
  }
  j["links"] = nlohmann::json::array();
  for (const auto& l : r.links) {
    j["links"].push_back({{"from", p.devices[l.from].name},
                          {"to", p.devices[l.to].name},
                          {"bytes", l.bytes},
                          {"transfers", l.transfers}});
  }
  j["uplinks"] = nlohmann::json::array();
  for (size_t d = 0; d < r.up_bytes.size(); ++d) {
    j["uplinks"].push_back({{"device", p.devices[d].name},
                            {"bytes", r.up_bytes[d]},
                            {"transfers", r.up_transfers[d]},
                            {"busy_seconds", r.up_seconds[d]}});
  }
  j["busiest_uplink"] = p.devices[r.busiest].name;
  j["downlinks"] = nlohmann::json::array();
  for (size_t d = 0; d < r.down_bytes.size(); ++d) {
    j["downlinks"].push_back(
        {{"device", p.devices[d].name}, {"bytes", r.down_bytes[d]}});
  }
  j["busiest_downlink"] = p.devices[r.busiest_down].name;
  if (r.cluster.network.shared) {
    j["medium"] = {{"bandwidth_bps", r.cluster.network.bandwidth_bps},
                   {"airtime_seconds", MediumAirtime(r)}};
  }
  return j;
}

void PrintLayers(const PlanCost& c) {
  std::cout << std::left << std::setw(28) << "layer" << std::setw(10)
            << "scheme" << std::right << std::setw(14) << "crossing"
            << std::setw(16) << "max weights/dev" << std::setw(16)
            << "max MACs/dev"
            << "\n";
  for (const auto& l : c.layers) {
    int64_t mw = 0, mm = 0;
    for (auto v : l.weight_elements_per_device) mw = std::max(mw, v);
    for (auto v : l.macs_per_device) mm = std::max(mm, v);
    std::cout << std::left << std::setw(28) << l.name << std::setw(10)
              << l.scheme << std::right << std::setw(14)
              << HumanBytes(l.communication_elements * kBytesPerElement)
              << std::setw(16) << HumanBytes(mw * kBytesPerElement)
              << std::setw(16) << HumanCount(mm) << "\n";
  }
}

void PrintTotals(const CostReport& r) {
  const PlanCost& c = r.cost;
  // C keeps its exact count beside the human one: it is what the paper's
  // formulas are compared with.
  std::cout << "\nC = "
            << HumanBytes(c.communication_elements * kBytesPerElement)
            << " per inference (" << c.communication_elements << " elements)";
  if (r.formula.ok()) {
    std::cout << "; the paper's formulas give "
              << (r.formula.value() == c.communication_elements
                      ? std::string("the same")
                      : std::to_string(r.formula.value()) + " elements");
  }
  std::cout << "\nF = " << HumanBytes(c.max_weight_bytes_per_device())
            << " of weights on the fullest device\nT = "
            << HumanCount(c.macs_longest_path) << " MACs on the longest path\n";
  std::cout << "memory: " << MiB(r.need[r.fullest]) << " on "
            << r.plan.devices[r.fullest].name
            << ", the most of any device (weights + its largest weight while "
               "reordered + activations); "
            << (r.fits.ok() ? "every device holds its part" : r.fits.message())
            << "\n";
}

void PrintTraffic(const CostReport& r) {
  const Plan& p = r.plan;
  std::cout << "\nuplink        sends         transfers   busy at its "
               "bandwidth         receives\n";
  for (size_t d = 0; d < r.up_bytes.size(); ++d) {
    std::string busy = r.up_seconds[d] > 0 ? HumanMs(r.up_seconds[d] * 1e3)
                                           : std::string("- (free link)");
    if (d == r.busiest) busy += "   the busiest";
    std::string down = HumanBytes(r.down_bytes[d]);
    if (d == r.busiest_down && r.down_bytes[d] > 0) down += "   the most";
    std::cout << std::left << std::setw(14) << p.devices[d].name
              << std::setw(14) << HumanBytes(r.up_bytes[d]) << std::setw(12)
              << r.up_transfers[d] << std::setw(28) << busy << down << "\n";
  }
  if (r.cluster.network.shared) {
    std::cout << "\nshared medium "
              << HumanBitRate(r.cluster.network.bandwidth_bps) << ": "
              << HumanMs(MediumAirtime(r) * 1e3)
              << " of airtime per inference (every link's bytes take the one "
                 "channel, twice: up to the access point and down)\n";
  }
  std::cout << "\n" << r.links.size() << " links carry data; the busiest:\n";
  for (size_t i = 0; i < r.links.size() && i < 5; ++i) {
    const LinkTraffic& l = r.links[i];
    std::cout << "  " << p.devices[l.from].name << " -> "
              << p.devices[l.to].name << ": " << HumanBytes(l.bytes) << " in "
              << Plural(l.transfers, "transfer") << "\n";
  }
}

Status RunCost(const CostArgs& a) {
  ASSIGN_OR_RETURN(CostReport r, ComputeCost(a));
  if (a.json) {
    std::cout << CostJson(a, r).dump(1) << "\n";
    return Status::Ok();
  }
  std::cout << a.model << ", strategy " << a.strategy << ", "
            << Plural(static_cast<int64_t>(r.cluster.devices.size()), "device")
            << "\n\n";
  PrintLayers(r.cost);
  PrintTotals(r);
  if (!r.links.empty()) PrintTraffic(r);
  return Status::Ok();
}

}  // namespace

void AddCostCommand(CLI::App* app) {
  auto a = std::make_shared<CostArgs>();
  CLI::App* cmd = app->add_subcommand(
      "cost",
      "Weights per device (F), MACs on the longest path (T) and "
      "communication (C) of a strategy");
  cmd->add_option("model", a->model, "Zoo name or .onnx file")->required();
  a->devices.Add(cmd);
  cmd->add_option("--strategy", a->strategy, "A strategy of `shoal plan`")
      ->required();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--input-device", a->hub, "Device holding input and output");
  cmd->add_option("--reduce", a->reduce,
                  "Where partial sums are added up, as shoal plan --reduce: "
                  "peers (the default) or hub")
      ->check(CLI::IsMember({"peers", "hub"}));
  cmd->add_option("--fuse-objective", a->fuse_objective,
                  "fuse-ilp: link (the default) or bytes, as shoal plan "
                  "--fuse-objective")
      ->check(CLI::IsMember({"link", "bytes"}));
  cmd->add_option("--tiles", a->tiles,
                  "spatial: strips (the default) or 2d tiles, as shoal plan "
                  "--tiles")
      ->check(CLI::IsMember({"strips", "2d"}));
  cmd->callback([a] { throw CommandExit(ReportStatus(RunCost(*a))); });
}

}  // namespace shoal
