#include "plan/plan_print.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

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

std::string Ms(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << s * 1e3 << " ms";
  return o.str();
}

std::string Rps(double r) {
  std::ostringstream o;
  o << std::setprecision(4) << r << " req/s";
  return o.str();
}

// "vgg16", or "cifarnet split into 8 LCP branches (fattened 10%)".
std::string ModelLabel(const Plan& p) {
  std::ostringstream os;
  os << p.model.spec;
  if (p.model.lcp_branches > 0) {
    os << " split into " << p.model.lcp_branches
       << (p.model.lcp_shares.empty() ? "" : " unequal") << " LCP branches";
    if (p.model.lcp_fatten_pct > 0) {
      os << " (fattened " << p.model.lcp_fatten_pct << "%)";
    }
  }
  return os.str();
}

// The objective's value of an alternative, smaller is better (as
// planner/predict.h's ObjectiveValue); 0 when it was not compared.
double AlternativeValue(const PlanAlternative& a, const std::string& obj) {
  if (obj == "throughput") {
    return a.throughput_rps > 0 ? 1 / a.throughput_rps : 0;
  }
  return a.latency_s;
}

// "+4.3 %" under 2x, else "2.36x", of `v` against the winner's `best`.
std::string Behind(double v, double best) {
  std::ostringstream o;
  if (v < 2 * best) {
    o << "+" << std::fixed << std::setprecision(1) << 100 * (v / best - 1)
      << " %";
  } else {
    o << std::fixed << std::setprecision(2) << v / best << "x";
  }
  return o.str();
}

// What the MILP's solver said of the candidate "milp" (planner/auto_plan.cc
// keeps the first MILP's word), without its model's size: the MILP is
// optimal only for its own cost model, so where another candidate won the
// line says so rather than leave "optimal" beside a slower plan.
std::string SolverNote(const PlanPrediction& pr, const std::string& name) {
  if (name != "milp" || pr.solver.empty()) return "";
  std::string s = pr.solver.substr(0, pr.solver.find(" ("));
  if (s.rfind("MILP optimal", 0) == 0) {
    s = "the MILP's optimum for its own cost model";
  }
  return s;
}

// Auto's nearest rivals, then the MILP's plan and one device where they
// are further off: at most five lines. Candidates predicted the same as
// one already listed (a setting that changed nothing) are skipped.
void PrintRivals(const PlanPrediction& pr, std::ostream& os) {
  const double best = pr.objective == "throughput"
                          ? (pr.throughput_rps > 0 ? 1 / pr.throughput_rps : 0)
                          : pr.latency_s;
  std::vector<const PlanAlternative*> sorted;
  for (const auto& a : pr.alternatives) {
    if (a.name == "random" || AlternativeValue(a, pr.objective) <= 0) continue;
    sorted.push_back(&a);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto* x, auto* y) {
    return AlternativeValue(*x, pr.objective) <
           AlternativeValue(*y, pr.objective);
  });
  auto same = [](double x, double y) {
    return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y));
  };
  std::vector<const PlanAlternative*> shown;
  std::vector<double> values = {best};
  auto seen = [&](double v) {
    return std::any_of(values.begin(), values.end(),
                       [&](double w) { return same(v, w); });
  };
  for (const PlanAlternative* a : sorted) {
    if (shown.size() == 3) break;
    const double v = AlternativeValue(*a, pr.objective);
    if (a->name == pr.method || seen(v)) continue;
    shown.push_back(a);
    values.push_back(v);
  }
  for (const char* name : {"milp", "one-device"}) {
    for (const PlanAlternative* a : sorted) {
      if (a->name != name || a->name == pr.method) continue;
      if (std::find(shown.begin(), shown.end(), a) == shown.end()) {
        shown.push_back(a);
      }
    }
  }
  std::stable_sort(shown.begin(), shown.end(), [&](auto* x, auto* y) {
    return AlternativeValue(*x, pr.objective) <
           AlternativeValue(*y, pr.objective);
  });
  size_t width = 20;
  for (const PlanAlternative* a : shown)
    width = std::max(width, a->name.size());
  for (const PlanAlternative* a : shown) {
    const std::string note = SolverNote(pr, a->name);
    os << "    " << std::left << std::setw(static_cast<int>(width) + 2)
       << a->name << std::setw(12) << Ms(a->latency_s) << std::setw(15)
       << Rps(a->throughput_rps)
       << Behind(AlternativeValue(*a, pr.objective), best)
       << (note.empty() ? "" : "  " + note) << "\n";
  }
}

// What each scheme means, for the line that counts the layers by scheme.
const char* SchemeGloss(const std::string& scheme) {
  static const std::map<std::string, const char*> kGloss = {
      {"whole", "on one device"},       {"lop", "split by outputs"},
      {"lip", "split by inputs"},       {"fuse1", "fused pairs, first"},
      {"fuse2", "fused pairs, second"}, {"channel", "split by channels"},
      {"filter", "split by filters"},   {"spatial", "strips of rows"},
      {"pipeline", "whole, in stages"}, {"parts", "where their input lies"}};
  const auto it = kGloss.find(scheme);
  return it == kGloss.end() ? nullptr : it->second;
}

// "31 spatial (strips of rows), 3 lip (split by inputs), ...": the plan's
// layers counted by scheme, the most common first.
std::string SchemeCounts(const Plan& p) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& d : p.decisions) {
    if (d.layer == "*" || d.layer == "lcp split") continue;
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == d.scheme; });
    if (it == counts.end()) {
      counts.emplace_back(d.scheme, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(
      counts.begin(), counts.end(),
      [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string s;
  for (const auto& [scheme, n] : counts) {
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + scheme;
    if (const char* gloss = SchemeGloss(scheme)) {
      s += std::string(" (") + gloss + ")";
    }
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
  os << "plan: " << ModelLabel(p) << ", strategy " << p.strategy << ", "
     << p.devices.size() << " devices, " << p.tasks.size() << " tasks, "
     << p.transfers.size() << " transfers\n";
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
  os << "\npredicted (" << pr.objective << " objective, chose " << pr.method
     << "): latency " << Ms(pr.latency_s) << ", throughput "
     << Rps(pr.throughput_rps);
  if (pr.concurrency > 0) {
    os << " at " << pr.concurrency << " in flight (simulated)";
  }
  os << "\n";
  // The solver's line is the MILP candidate's, which need not have won.
  if (!pr.solver.empty()) {
    const bool of_plan =
        pr.method == "milp" || pr.solver.rfind("MILP not used", 0) == 0;
    os << (of_plan ? "solver: " : "solver of the milp candidate: ") << pr.solver
       << "\n";
  }
  os << std::left << std::setw(14) << "device" << std::setw(14) << "compute"
     << std::setw(14) << "sending"
     << "idle (per request)\n";
  for (const auto& d : pr.devices) {
    os << std::left << std::setw(14) << d.device << std::setw(14)
       << Ms(d.compute_s) << std::setw(14) << Ms(d.communication_s)
       << Ms(d.idle_s) << "\n";
  }
  os << "\nalternatives (predicted):\n"
     << std::left << std::setw(20) << "candidate" << std::setw(14) << "latency"
     << std::setw(18) << "throughput"
     << "note\n";
  for (const auto& a : pr.alternatives) {
    const bool compared = a.latency_s > 0 || a.throughput_rps > 0;
    os << std::left << std::setw(20) << a.name << std::setw(14)
       << (compared ? Ms(a.latency_s) : "-") << std::setw(18)
       << (compared ? Rps(a.throughput_rps) : "-") << a.note << "\n";
  }
}

void PrintPlanSummary(const Plan& p, const PlanSummaryOptions& o,
                      std::ostream& os) {
  const PlanPrediction* pr = p.prediction   ? &*p.prediction
                             : o.prediction ? &*o.prediction
                                            : nullptr;
  const RunStats c = CountCommunication(p);
  const auto wb = WeightBytesPerDevice(p);
  os << "plan: " << ModelLabel(p) << " on " << o.cluster << ", strategy "
     << p.strategy << "\n";
  if (pr) {
    os << (p.prediction ? "chose " + pr->method + ": predicted"
                        : std::string("predicted:"))
       << " latency " << Ms(pr->latency_s) << ", throughput "
       << Rps(pr->throughput_rps);
    if (pr->concurrency > 0) os << " at " << pr->concurrency << " in flight";
    os << "\n";
  }
  os << "input " << ShapeToString(p.input_shape) << " on "
     << p.devices[p.input_device].name << ", output "
     << ShapeToString(p.output_shape) << " on "
     << p.devices[p.output_device].name << "; " << p.tasks.size() << " tasks, "
     << HumanBytes(c.bytes_total) << " sent per inference\n\n";

  std::vector<int> tasks(p.devices.size());
  for (const auto& t : p.tasks) {
    for (int d : t.Replicas()) ++tasks[d];
  }
  const bool timed = pr && pr->devices.size() == p.devices.size();
  os << std::left << std::setw(14) << "device" << std::setw(7) << "tasks"
     << std::setw(12) << "weights";
  if (timed) {
    os << std::setw(12) << "compute" << std::setw(12) << "sending"
       << "idle (predicted, per request)\n";
  } else {
    os << std::setw(12) << "sent"
       << "received (per request)\n";
  }
  for (size_t d = 0; d < p.devices.size(); ++d) {
    os << std::left << std::setw(14) << p.devices[d].name << std::setw(7)
       << tasks[d] << std::setw(12) << HumanBytes(wb[d]);
    if (timed) {
      const DevicePrediction& r = pr->devices[d];
      os << std::setw(12) << Ms(r.compute_s) << std::setw(12)
         << Ms(r.communication_s) << Ms(r.idle_s) << "\n";
    } else {
      os << std::setw(12) << HumanBytes(c.bytes_sent[d])
         << HumanBytes(c.bytes_received[d]) << "\n";
    }
  }

  os << "\nwhy:\n";
  if (p.prediction) {
    int compared = 0;
    std::string memo;
    for (const auto& a : pr->alternatives) {
      compared += a.name != "random" && AlternativeValue(a, pr->objective) > 0;
      if (a.name == pr->method) memo = a.note;
    }
    os << "  " << pr->method << " has the "
       << (pr->objective == "throughput" ? "highest predicted throughput"
                                         : "lowest predicted latency")
       << " of " << compared << " candidates"
       << (memo.empty() ? "" : "; " + memo);
    // The solver's word is the candidate milp's: said here only when milp
    // won, or when the MILP was not used at all.
    if (pr->method == "milp") {
      os << "; " << pr->solver.substr(0, pr->solver.find(" ("));
    }
    os << "\n";
    if (pr->solver.rfind("MILP not used", 0) == 0) {
      os << "  " << pr->solver << "\n";
    }
  } else {
    os << "  strategy " << p.strategy << ", as asked (--strategy)\n";
  }
  const std::string schemes = SchemeCounts(p);
  if (!schemes.empty()) os << "  its layers: " << schemes << "\n";
  for (const auto& d : p.decisions) {
    if (d.layer == "lcp split")
      os << "  " << d.layer << ": " << d.reason << "\n";
  }
  if (p.prediction) {
    os << "  the nearest other candidates, and how far behind:\n";
    PrintRivals(*pr, os);
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
