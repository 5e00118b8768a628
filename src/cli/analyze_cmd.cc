// `shoal analyze MODEL`: per-layer shapes and exact costs, and totals.
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "graph/cost.h"
#include "graph/shape_inference.h"
#include "models/load_model.h"
#include "sim/systolic.h"
#include "util/units.h"

namespace shoal {
namespace {

struct AnalyzeArgs {
  std::string model;
  std::string input_shape;
  std::string accelerator;  // inline spec, cluster/accelerator.h
  bool json = false;
};

// The accelerator's totals over the model, one layer after another.
struct ArrayTotals {
  int64_t cycles = 0, dram_bytes = 0, macs = 0;
  double seconds = 0, energy_j = 0, mac_j = 0, memory_j = 0, static_j = 0;
};

nlohmann::json SystolicJson(const SystolicCost& s) {
  return {{"cycles", s.cycles},
          {"blocks", s.blocks},
          {"utilisation", s.utilisation},
          {"dram_bytes", s.dram_bytes},
          {"sram_bytes", s.sram_bytes},
          {"seconds", s.seconds},
          {"memory_bound", s.memory_bound()},
          {"energy_j", s.energy_j}};
}

// `--accelerator`: every layer on the LCP paper's array, then the totals
// and the utilisation by kind of layer (the paper's Fig. 17 form).
void PrintArray(const Graph& g, const GraphCost& cost,
                const AcceleratorSpec& acc) {
  std::cout << "\non the accelerator: " << DescribeAccelerator(acc) << "\n";
  std::cout << std::left << std::setw(28) << "name" << std::setw(20) << "op"
            << std::right << std::setw(10) << "MACs" << std::setw(8) << "blocks"
            << std::setw(12) << "cycles" << std::setw(7) << "util"
            << std::setw(12) << "time" << std::setw(12) << "DRAM"
            << std::setw(12) << "energy"
            << "\n";
  ArrayTotals t;
  std::map<std::string, std::pair<int64_t, int64_t>> by_op;  // macs, cycles
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& c = cost.nodes[i];
    const SystolicCost s = SystolicNode(acc, c);
    t.cycles += s.cycles;
    t.dram_bytes += s.dram_bytes;
    t.macs += c.macs;
    t.seconds += s.seconds;
    t.energy_j += s.energy_j;
    t.mac_j += c.macs * acc.mac_j;
    t.static_j += acc.static_w * s.seconds;
    if (c.macs > 0) {
      by_op[n.op].first += c.macs;
      by_op[n.op].second += s.cycles;
    }
    std::string name =
        n.name.size() > 27 ? n.name.substr(0, 24) + "..." : n.name;
    char energy[32];
    std::snprintf(energy, sizeof(energy), "%.3g uJ", s.energy_j * 1e6);
    std::cout << std::left << std::setw(28) << name << std::setw(20) << n.op
              << std::right << std::setw(10) << HumanCount(c.macs)
              << std::setw(8) << s.blocks << std::setw(12)
              << HumanCount(s.cycles) << std::setw(7)
              << (c.macs > 0 ? Percent(s.utilisation) : std::string("-"))
              << std::setw(12) << HumanMs(s.seconds * 1e3)
              << (s.memory_bound() ? "*" : " ") << std::setw(11)
              << HumanBytes(s.dram_bytes) << std::setw(12) << energy << "\n";
  }
  t.memory_j = t.energy_j - t.mac_j - t.static_j;
  const double util =
      t.cycles > 0 ? double(t.macs) / (double(t.cycles) * acc.rows * acc.cols)
                   : 0;
  std::cout << "total on the array: " << HumanMs(t.seconds * 1e3) << ", "
            << HumanCount(t.cycles) << " cycles, " << Percent(util)
            << " of the cells busy over all of them, "
            << HumanBytes(t.dram_bytes) << " from and to DRAM; energy "
            << std::setprecision(3) << t.energy_j * 1e3 << " mJ per inference ("
            << t.mac_j * 1e3 << " MACs, " << t.memory_j * 1e3 << " memory, "
            << t.static_j * 1e3 << " static)\n";
  for (const auto& [op, mc] : by_op) {
    std::cout << "  " << op << ": "
              << Percent(double(mc.first) /
                         (double(mc.second) * acc.rows * acc.cols))
              << " of the cells busy\n";
  }
  std::cout << "(* bound by DRAM, not the array; docs/accelerator.md)\n";
}

// The shapes of n's inputs that are not weights.
std::vector<Shape> InputShapes(const Graph& g, const Node& n) {
  std::vector<Shape> out;
  for (const auto& in : n.inputs) {
    const TensorInfo* t = in.empty() ? nullptr : g.FindTensor(in);
    if (t && !t->is_weight()) out.push_back(t->shape);
  }
  return out;
}

// `--json`: every layer's shapes and exact costs, the totals, and with
// `acc` each layer's and the whole model's cost on the accelerator.
nlohmann::json AnalysisJson(const Graph& g, const GraphCost& cost,
                            const std::optional<AcceleratorSpec>& acc) {
  nlohmann::json j;
  j["model"] = g.name;
  j["layers"] = nlohmann::json::array();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& c = cost.nodes[i];
    j["layers"].push_back({{"name", n.name},
                           {"op", n.op},
                           {"input_shapes", InputShapes(g, n)},
                           {"output_shape", g.FindTensor(n.outputs[0])->shape},
                           {"params", c.params},
                           {"macs", c.macs},
                           {"output_bytes", c.output_bytes()}});
    if (acc) {
      j["layers"].back()["accelerator"] = SystolicJson(SystolicNode(*acc, c));
    }
  }
  j["total"] = {{"params", cost.params},
                {"macs", cost.macs},
                {"weight_bytes", cost.weight_bytes()},
                {"peak_activation_bytes", cost.peak_activation_bytes}};
  if (acc) {
    double seconds = 0, energy = 0;
    int64_t cycles = 0;
    for (const auto& c : cost.nodes) {
      const SystolicCost s = SystolicNode(*acc, c);
      seconds += s.seconds;
      energy += s.energy_j;
      cycles += s.cycles;
    }
    j["accelerator"] = {{"spec", DescribeAccelerator(*acc)},
                        {"rows", acc->rows},
                        {"cols", acc->cols},
                        {"seconds", seconds},
                        {"cycles", cycles},
                        {"energy_j", energy}};
  }
  return j;
}

// The table of layers, then the totals.
void PrintLayers(const Graph& g, const GraphCost& cost) {
  std::cout << "model " << g.name << "  (" << g.nodes.size() << " layers)\n";
  std::cout << std::left << std::setw(28) << "name" << std::setw(20) << "op"
            << std::setw(20) << "input" << std::setw(18) << "output"
            << std::right << std::setw(10) << "params" << std::setw(10)
            << "MACs" << std::setw(12) << "output"
            << "\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& c = cost.nodes[i];
    auto ins = InputShapes(g, n);
    std::string in_text = ins.empty() ? "-" : ShapeToString(ins[0]);
    if (ins.size() > 1) in_text += " +" + std::to_string(ins.size() - 1);
    std::string name =
        n.name.size() > 27 ? n.name.substr(0, 24) + "..." : n.name;
    std::cout << std::left << std::setw(28) << name << std::setw(20) << n.op
              << std::setw(20) << in_text << std::setw(18)
              << ShapeToString(g.FindTensor(n.outputs[0])->shape) << std::right
              << std::setw(10) << HumanCount(c.params) << std::setw(10)
              << HumanCount(c.macs) << std::setw(12)
              << HumanBytes(c.output_bytes()) << "\n";
  }
  std::cout << "total: " << HumanCount(cost.params) << " params, "
            << HumanCount(cost.macs) << " MACs, "
            << HumanBytes(cost.weight_bytes()) << " of weights, "
            << HumanBytes(cost.peak_activation_bytes)
            << " of activations at the peak (--json gives exact counts)\n";
}

Status RunAnalyze(const AnalyzeArgs& a) {
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  const Graph& g = m.graph;
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(g));
  std::optional<AcceleratorSpec> acc;
  if (!a.accelerator.empty()) {
    ASSIGN_OR_RETURN(acc, ParseAcceleratorInline(
                              a.accelerator == "paper" ? "" : a.accelerator));
  }
  if (a.json) {
    std::cout << AnalysisJson(g, cost, acc).dump(2) << std::endl;
    return Status::Ok();
  }
  PrintLayers(g, cost);
  if (acc) PrintArray(g, cost, *acc);
  return Status::Ok();
}

}  // namespace

void AddAnalyzeCommand(CLI::App* app) {
  auto a = std::make_shared<AnalyzeArgs>();
  auto* cmd = app->add_subcommand(
      "analyze", "Per-layer shapes, parameters, MACs and memory of a model");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("--input-shape", a->input_shape,
                  "Input shape, e.g. 1,3,224,224");
  cmd->add_option("--accelerator", a->accelerator,
                  "Also price every layer on the LCP paper's systolic array: "
                  "'paper' (32x64 cells, 53.1 MHz, 512 KiB SRAM, 3.2 GB/s "
                  "DRAM, 8-bit) or KEY=VALUE,... changing those "
                  "(rows=32,cols=64,clock=800MHz,sram=1MiB,dram=3.2GB/s,"
                  "bits=8; docs/accelerator.md)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunAnalyze(*a))); });
}

}  // namespace shoal
