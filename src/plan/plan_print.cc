#include "plan/plan_print.h"

#include <algorithm>
#include <iomanip>
#include <map>

#include "graph/cost.h"
#include "plan/run_stats.h"
#include "plan/task_weights.h"
#include "util/units.h"

namespace shoal {

namespace {

// "laptop,pi4", or "laptop x16,pi4 x3,pi3a" for a deal in proportion to
// speed (a device listed several times; plan/deal.h).
std::string Devices(const Plan& p, const Task& t) {
  std::string s;
  for (int d : t.Replicas()) {
    s += (s.empty() ? "" : ",") + p.devices[d].name;
    const auto n = std::count(t.devices.begin(), t.devices.end(), d);
    if (n > 1) s += " x" + std::to_string(n);
  }
  return s;
}

const char* kColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                         "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                         "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

}  // namespace

void PrintPlanTable(const Plan& p, std::ostream& os) {
  const RunStats c = CountCommunication(p);
  const auto wb = WeightBytesPerDevice(p);
  os << "plan: " << p.model.spec;
  if (p.model.lcp_branches > 0) {
    os << " split into " << p.model.lcp_branches
       << (p.model.lcp_shares.empty() ? "" : " unequal") << " LCP branches";
    if (p.model.lcp_fatten_pct > 0) {
      os << " (fattened " << p.model.lcp_fatten_pct << "%)";
    }
  }
  os << ", strategy " << p.strategy << ", " << p.devices.size() << " devices, "
     << p.tasks.size() << " tasks, " << p.transfers.size() << " transfers\n";
  os << "input " << p.input_name << " " << ShapeToString(p.input_shape)
     << " on " << p.devices[p.input_device].name << "; output " << p.output_name
     << " " << ShapeToString(p.output_shape) << " on "
     << p.devices[p.output_device].name << "\n\n";
  os << std::left << std::setw(5) << "task" << std::setw(14) << "device"
     << std::setw(9) << "scheme" << std::setw(7) << "nodes" << std::setw(12)
     << "weights"
     << "name\n";
  for (const auto& t : p.tasks) {
    int64_t w = 0;
    for (const auto& s : t.weights) w += s.region.elements() * kBytesPerElement;
    os << std::left << std::setw(5) << t.id << std::setw(14)
       << (Devices(p, t) + " ") << std::setw(9) << t.scheme << std::setw(7)
       << t.fragment.nodes.size() << std::setw(12) << HumanBytes(w) << t.name
       << "\n";
  }
  os << "\n"
     << std::left << std::setw(14) << "device" << std::setw(14) << "weights"
     << std::setw(14) << "sent"
     << "received\n";
  for (size_t d = 0; d < p.devices.size(); ++d) {
    os << std::left << std::setw(14) << p.devices[d].name << std::setw(14)
       << HumanBytes(wb[d]) << std::setw(14) << HumanBytes(c.bytes_sent[d])
       << HumanBytes(c.bytes_received[d]) << "\n";
  }
  os << "communication per inference: " << HumanBytes(c.bytes_total) << " ("
     << HumanCount(c.elements_total) << " elements)\n";
  if (!p.decisions.empty()) {
    os << "\nwhy:\n";
    for (const auto& d : p.decisions) {
      os << "  " << d.layer << ": " << d.scheme << " - " << d.reason << "\n";
    }
  }
  if (p.prediction) PrintPrediction(*p.prediction, os);
}

void PrintPrediction(const PlanPrediction& pr, std::ostream& os) {
  auto ms = [](double s) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2) << s * 1e3 << " ms";
    return o.str();
  };
  auto rps = [](double r) {
    std::ostringstream o;
    o << std::setprecision(4) << r << " req/s";
    return o.str();
  };
  os << "\npredicted (" << pr.objective << " objective, chose " << pr.method
     << "): latency " << ms(pr.latency_s) << ", throughput "
     << rps(pr.throughput_rps);
  if (pr.concurrency > 0) {
    os << " at " << pr.concurrency << " in flight (simulated)";
  }
  os << "\n";
  if (!pr.solver.empty()) os << "solver: " << pr.solver << "\n";
  os << std::left << std::setw(14) << "device" << std::setw(14) << "compute"
     << std::setw(14) << "sending"
     << "idle (per request)\n";
  for (const auto& d : pr.devices) {
    os << std::left << std::setw(14) << d.device << std::setw(14)
       << ms(d.compute_s) << std::setw(14) << ms(d.communication_s)
       << ms(d.idle_s) << "\n";
  }
  os << "\nalternatives (predicted):\n"
     << std::left << std::setw(20) << "candidate" << std::setw(14) << "latency"
     << std::setw(18) << "throughput"
     << "note\n";
  for (const auto& a : pr.alternatives) {
    const bool compared = a.latency_s > 0 || a.throughput_rps > 0;
    os << std::left << std::setw(20) << a.name << std::setw(14)
       << (compared ? ms(a.latency_s) : "-") << std::setw(18)
       << (compared ? rps(a.throughput_rps) : "-") << a.note << "\n";
  }
}

void WritePlanDot(const Plan& p, std::ostream& os) {
  os << "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=filled];\n";
  os << "  input [label=\"input\\n"
     << ShapeToString(p.input_shape)
     << "\", shape=ellipse, fillcolor=white];\n";
  os << "  output [label=\"output\\n"
     << ShapeToString(p.output_shape)
     << "\", shape=ellipse, fillcolor=white];\n";
  for (const auto& t : p.tasks) {
    os << "  t" << t.id << " [label=\"" << t.name << "\\n"
       << t.scheme << "\", fillcolor=\"" << kColors[t.devices[0] % 12]
       << "\"];\n";
  }
  // One edge per task pair, labelled with the bytes that cross.
  std::map<std::pair<int, int>, int64_t> edges;
  for (const auto& x : p.transfers) {
    edges[{x.src.task, x.dst.task}] += p.WireBytes(x);
  }
  auto id = [](int t) {
    return t == kModelInput    ? std::string("input")
           : t == kModelOutput ? std::string("output")
                               : "t" + std::to_string(t);
  };
  for (const auto& [e, b] : edges) {
    const bool cross = p.DeviceOf(e.first) != p.DeviceOf(e.second);
    os << "  " << id(e.first) << " -> " << id(e.second) << " [label=\""
       << HumanBytes(b) << "\"" << (cross ? "" : ", style=dashed") << "];\n";
  }
  os << "  subgraph cluster_legend { label=\"devices\";\n";
  for (size_t d = 0; d < p.devices.size(); ++d) {
    os << "    dev" << d << " [label=\"" << p.devices[d].name
       << "\", fillcolor=\"" << kColors[d % 12] << "\"];\n";
  }
  os << "  }\n}\n";
}

}  // namespace shoal
