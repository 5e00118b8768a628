// `shoal cost MODEL --devices N --strategy S`: F, T and C of a strategy's
// Plan, per layer, counted from the Plan (and, for the fully-distributed
// paper's schemes, its formulas, which must agree).
#include <cstdio>
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
  DeviceFlags devices;
};

Status RunCost(const CostArgs& a) {
  ASSIGN_OR_RETURN(Cluster cluster, a.devices.ResolveCluster());
  PlanOptions po;
  po.strategy = a.strategy;
  po.devices = cluster.PlanDevices();
  po.hub = a.hub;
  po.reduce_on_peers = a.reduce == "peers";
  po.fuse_objective = a.fuse_objective == "bytes" ? FuseObjective::kBytes
                                                  : FuseObjective::kLinkTime;
  po.link_rates = cluster.UplinkRates();
  po.link_latency_s = cluster.MaxLinkLatency();
  po.model.spec = a.model;
  ASSIGN_OR_RETURN(auto shape, ParseInputShapeFlag(a.input_shape));
  if (shape) po.model.input_shape = *shape;
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(po.model, false));
  ASSIGN_OR_RETURN(Plan p, MakePlan(m.graph, po));
  ASSIGN_OR_RETURN(PlanCost c, ComputePlanCost(p, m.graph));
  auto formula = FormulaCommunication(p, m.graph);
  // What each worker needs, by the rule the planners and workers use.
  const auto wb = WeightBytesPerDevice(p);
  const auto largest = LargestWeightPerDevice(p);
  const auto act = PeakActivationPerDevice(p);
  std::vector<int64_t> need(p.devices.size());
  size_t fullest = 0;
  for (size_t d = 0; d < need.size(); ++d) {
    need[d] = DeviceWeightMemory(wb[d], largest[d]) + act[d];
    if (need[d] > need[fullest]) fullest = d;
  }
  const Status fits = CheckPlanMemory(p, m.graph);
  // Traffic per link and per uplink (what a device sends, over its one
  // radio): the busiest uplink, not the total, bounds the time.
  const std::vector<LinkTraffic> links = TrafficPerLink(p);
  std::vector<int64_t> up_bytes(p.devices.size(), 0);
  std::vector<int> up_transfers(p.devices.size(), 0);
  // What each device receives: on a radio that carries its uplink and its
  // downlink at the link's rate, a device that every partial sum goes to
  // is bound by this side.
  std::vector<int64_t> down_bytes(p.devices.size(), 0);
  for (const auto& l : links) {
    up_bytes[l.from] += l.bytes;
    up_transfers[l.from] += l.transfers;
    down_bytes[l.to] += l.bytes;
  }
  size_t busiest_down = 0;
  for (size_t d = 0; d < down_bytes.size(); ++d) {
    if (down_bytes[d] > down_bytes[busiest_down]) busiest_down = d;
  }
  // Seconds an uplink is busy at its bandwidth; 0 on a free link.
  auto up_seconds = [&](size_t d) {
    const double bps =
        d < cluster.devices.size() ? cluster.devices[d].link.bandwidth_bps : 0;
    return bps > 0 ? up_bytes[d] * 8.0 / bps : 0.0;
  };
  size_t busiest = 0;
  for (size_t d = 0; d < up_bytes.size(); ++d) {
    const bool more = up_seconds(d) != up_seconds(busiest)
                          ? up_seconds(d) > up_seconds(busiest)
                          : up_bytes[d] > up_bytes[busiest];
    if (more) busiest = d;
  }
  if (a.json) {
    nlohmann::json j;
    j["strategy"] = a.strategy;
    j["devices"] = cluster.devices.size();
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
        {"memory_bytes_per_device", need},
        {"fits_memory", fits.ok()}};
    if (formula.ok()) {
      j["total"]["formula_communication_elements"] = formula.value();
    }
    j["links"] = nlohmann::json::array();
    for (const auto& l : links) {
      j["links"].push_back({{"from", p.devices[l.from].name},
                            {"to", p.devices[l.to].name},
                            {"bytes", l.bytes},
                            {"transfers", l.transfers}});
    }
    j["uplinks"] = nlohmann::json::array();
    for (size_t d = 0; d < up_bytes.size(); ++d) {
      j["uplinks"].push_back({{"device", p.devices[d].name},
                              {"bytes", up_bytes[d]},
                              {"transfers", up_transfers[d]},
                              {"busy_seconds", up_seconds(d)}});
    }
    j["busiest_uplink"] = p.devices[busiest].name;
    j["downlinks"] = nlohmann::json::array();
    for (size_t d = 0; d < down_bytes.size(); ++d) {
      j["downlinks"].push_back(
          {{"device", p.devices[d].name}, {"bytes", down_bytes[d]}});
    }
    j["busiest_downlink"] = p.devices[busiest_down].name;
    std::cout << j.dump(1) << "\n";
    return Status::Ok();
  }
  std::cout << a.model << ", strategy " << a.strategy << ", "
            << cluster.devices.size() << " devices\n\n";
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
  // C keeps its exact count beside the human one: it is what the paper's
  // formulas are compared with.
  std::cout << "\nC = "
            << HumanBytes(c.communication_elements * kBytesPerElement)
            << " per inference (" << c.communication_elements << " elements)";
  if (formula.ok()) {
    std::cout << "; the paper's formulas give "
              << (formula.value() == c.communication_elements
                      ? std::string("the same")
                      : std::to_string(formula.value()) + " elements");
  }
  std::cout << "\nF = " << HumanBytes(c.max_weight_bytes_per_device())
            << " of weights on the fullest device\nT = "
            << HumanCount(c.macs_longest_path) << " MACs on the longest path\n";
  std::cout << "memory: " << MiB(need[fullest]) << " on "
            << p.devices[fullest].name
            << ", the most of any device (weights + its largest weight while "
               "reordered + activations); "
            << (fits.ok() ? "every device holds its part" : fits.message())
            << "\n";
  if (links.empty()) return Status::Ok();
  std::cout << "\nuplink        sends         transfers   busy at its "
               "bandwidth         receives\n";
  for (size_t d = 0; d < up_bytes.size(); ++d) {
    std::string busy = up_seconds(d) > 0 ? HumanMs(up_seconds(d) * 1e3)
                                         : std::string("- (free link)");
    if (d == busiest) busy += "   the busiest";
    std::string down = HumanBytes(down_bytes[d]);
    if (d == busiest_down && down_bytes[d] > 0) down += "   the most";
    std::cout << std::left << std::setw(14) << p.devices[d].name
              << std::setw(14) << HumanBytes(up_bytes[d]) << std::setw(12)
              << up_transfers[d] << std::setw(28) << busy << down << "\n";
  }
  std::cout << "\n" << links.size() << " links carry data; the busiest:\n";
  for (size_t i = 0; i < links.size() && i < 5; ++i) {
    std::cout << "  " << p.devices[links[i].from].name << " -> "
              << p.devices[links[i].to].name << ": "
              << HumanBytes(links[i].bytes) << " in " << links[i].transfers
              << (links[i].transfers == 1 ? " transfer\n" : " transfers\n");
  }
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
  cmd->callback([a] { throw CommandExit(ReportStatus(RunCost(*a))); });
}

}  // namespace shoal
