#include "engine/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace shoal {
namespace {

// The op a step computes, from its label: a node name, "node+Act" for an
// activation fused into its producer, or "reorder <tensor>".
std::string OpOfLabel(const Graph& g, const std::string& label) {
  if (label.rfind("reorder ", 0) == 0) return "reorder";
  if (const Node* n = g.FindNode(label)) return n->op;
  const size_t plus = label.rfind('+');
  if (plus != std::string::npos) {
    if (const Node* n = g.FindNode(label.substr(0, plus)))
      return n->op + label.substr(plus);
  }
  return "?";
}

}  // namespace

OpProfile ProfileByOp(const Graph& g, const std::vector<std::string>& labels,
                      const std::vector<std::string>& kernels,
                      const std::vector<double>& seconds, int runs) {
  OpProfile p;
  const double per_run = runs > 0 ? 1.0 / runs : 0.0;
  std::map<std::pair<std::string, std::string>, OpProfileRow> by_op;
  for (size_t i = 0; i < labels.size() && i < seconds.size(); ++i) {
    StepProfileRow s;
    s.label = labels[i];
    s.op = OpOfLabel(g, labels[i]);
    s.kernel = i < kernels.size() ? kernels[i] : "?";
    s.reference = s.kernel == "reference";
    s.seconds = seconds[i] * per_run;
    OpProfileRow& row = by_op[{s.op, s.kernel}];
    row.op = s.op;
    row.kernel = s.kernel;
    row.reference = s.reference;
    ++row.steps;
    row.seconds += s.seconds;
    p.total_seconds += s.seconds;
    p.steps.push_back(std::move(s));
  }
  for (auto& [key, row] : by_op) p.ops.push_back(row);
  auto slower = [](const auto& a, const auto& b) {
    return a.seconds > b.seconds;
  };
  std::stable_sort(p.ops.begin(), p.ops.end(), slower);
  std::stable_sort(p.steps.begin(), p.steps.end(), slower);
  return p;
}

std::string OpProfileText(const OpProfile& p, int top_steps) {
  std::ostringstream os;
  char line[256];
  auto share = [&](double s) {
    return p.total_seconds > 0 ? 100.0 * s / p.total_seconds : 0.0;
  };
  std::snprintf(line, sizeof(line), "%-28s %-16s %6s %10s %7s\n", "op",
                "kernel", "steps", "ms/run", "share");
  os << line;
  for (const auto& r : p.ops) {
    std::snprintf(line, sizeof(line), "%-28s %-16s %6d %10.3f %6.1f%%\n",
                  r.op.c_str(), r.kernel.c_str(), r.steps, r.seconds * 1e3,
                  share(r.seconds));
    os << line;
  }
  std::snprintf(line, sizeof(line), "%-28s %-16s %6zu %10.3f %6.1f%%\n",
                "total", "", p.steps.size(), p.total_seconds * 1e3, 100.0);
  os << line;
  const int n = std::min<int>(top_steps, static_cast<int>(p.steps.size()));
  if (n > 0) {
    os << "slowest " << n << (n == 1 ? " step" : " steps") << ":\n";
    for (int i = 0; i < n; ++i) {
      const auto& s = p.steps[i];
      std::snprintf(line, sizeof(line), "  %10.3f ms %6.1f%%  %s (%s, %s)\n",
                    s.seconds * 1e3, share(s.seconds), s.label.c_str(),
                    s.op.c_str(), s.kernel.c_str());
      os << line;
    }
  }
  return os.str();
}

}  // namespace shoal
