// `shoal analyze MODEL`: per-layer shapes and exact costs, and totals.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "graph/cost.h"
#include "graph/shape_inference.h"
#include "models/load_model.h"
#include "util/units.h"

namespace shoal {
namespace {

struct AnalyzeArgs {
  std::string model;
  std::string input_shape;
  bool json = false;
};

Status RunAnalyze(const AnalyzeArgs& a) {
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  const Graph& g = m.graph;
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(g));

  auto input_shapes = [&g](const Node& n) {
    std::vector<Shape> out;
    for (const auto& in : n.inputs) {
      const TensorInfo* t = in.empty() ? nullptr : g.FindTensor(in);
      if (t && !t->is_weight()) out.push_back(t->shape);
    }
    return out;
  };

  if (a.json) {
    nlohmann::json j;
    j["model"] = g.name;
    j["layers"] = nlohmann::json::array();
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      const NodeCost& c = cost.nodes[i];
      j["layers"].push_back(
          {{"name", n.name},
           {"op", n.op},
           {"input_shapes", input_shapes(n)},
           {"output_shape", g.FindTensor(n.outputs[0])->shape},
           {"params", c.params},
           {"macs", c.macs},
           {"output_bytes", c.output_bytes()}});
    }
    j["total"] = {{"params", cost.params},
                  {"macs", cost.macs},
                  {"weight_bytes", cost.weight_bytes()},
                  {"peak_activation_bytes", cost.peak_activation_bytes}};
    std::cout << j.dump(2) << std::endl;
    return Status::Ok();
  }

  std::cout << "model " << g.name << "  (" << g.nodes.size() << " layers)\n";
  std::cout << std::left << std::setw(28) << "name" << std::setw(20) << "op"
            << std::setw(20) << "input" << std::setw(18) << "output"
            << std::right << std::setw(10) << "params" << std::setw(10)
            << "MACs" << std::setw(12) << "output"
            << "\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& c = cost.nodes[i];
    auto ins = input_shapes(n);
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
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunAnalyze(*a))); });
}

}  // namespace shoal
