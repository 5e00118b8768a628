#include "planner/joint_milp.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>
#include <set>

#include "partition/glpk_problem.h"
#include "plan/plan_cost.h"

namespace shoal {

std::vector<int> SpeedOrder(const LatencyModel& m, int hub) {
  std::vector<int> order(m.num_devices());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double sa = m.MacsPerSecond(a), sb = m.MacsPerSecond(b);
    if (sa != sb) return sa > sb;
    return (a == hub) > (b == hub);
  });
  return order;
}

std::vector<std::vector<int>> CandidateGroups(const LatencyModel& m, int hub,
                                              const CandidateCaps& caps) {
  const std::vector<int> order = SpeedOrder(m, hub);
  const int n = static_cast<int>(order.size());
  std::vector<int> sizes;
  for (int s : {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}) {
    if (s <= std::min(n, caps.group_size)) sizes.push_back(s);
  }
  if (n <= caps.group_size && (sizes.empty() || sizes.back() != n) && n >= 2)
    sizes.push_back(n);
  // Keep the smallest and largest and spread the rest.
  std::vector<int> kept;
  const int g = std::min<int>(caps.groups, sizes.size());
  for (int i = 0; i < g; ++i) {
    const size_t at =
        g == 1 ? sizes.size() - 1 : i * (sizes.size() - 1) / (g - 1);
    if (kept.empty() || kept.back() != sizes[at]) kept.push_back(sizes[at]);
  }
  std::vector<std::vector<int>> groups;
  for (int s : kept) groups.emplace_back(order.begin(), order.begin() + s);
  return groups;
}

std::vector<Placement> UnitCandidates(const UnitPricer& pr, int u,
                                      const CandidateCaps& caps) {
  const auto& units = pr.units();
  const PlanUnit& unit = units[u];
  std::vector<Placement> out;
  std::vector<int> order = SpeedOrder(pr.model(), pr.hub());
  order.resize(std::min<size_t>(order.size(), caps.whole_devices));
  if (std::find(order.begin(), order.end(), pr.hub()) == order.end())
    order.push_back(pr.hub());
  for (int d : order) out.push_back(Placement{Form::kWhole, {d}});
  for (const auto& grp : CandidateGroups(pr.model(), pr.hub(), caps)) {
    if (caps.replicate) out.push_back(Placement{Form::kReplicate, grp});
    if (unit.splittable) {
      out.push_back(Placement{Form::kLop, grp});
      out.push_back(Placement{Form::kLip, grp});
      if (unit.fusable_with_next) out.push_back(Placement{Form::kFuse1, grp});
      if (u > 0 && units[u - 1].fusable_with_next)
        out.push_back(Placement{Form::kFuse2, grp});
    }
    if (unit.tileable) out.push_back(Placement{Form::kSpatial, grp});
  }
  std::vector<Placement> ok;
  for (auto& p : out) {
    if (pr.Price(u, p).ok) ok.push_back(std::move(p));
  }
  return ok;
}

namespace {

// What one column adds: to the objective's latency and to devices.
struct Column {
  int index = 0;
  double seconds = 0;
  std::map<int, double> busy;
  std::map<int, int64_t> weights;
};

void AddLoad(const Load& l, Column* c) {
  c->seconds += l.seconds;
  for (const auto& [d, s] : l.busy) c->busy[d] += s;
  for (const auto& [d, w] : l.weights) c->weights[d] += w;
}

}  // namespace

StatusOr<MilpResult> SolveJointMilp(const UnitPricer& pr,
                                    const MilpOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  const auto& units = pr.units();
  const int U = static_cast<int>(units.size());
  if (U == 0) return InvalidArgument("the model has no layers to place");
  if (!(opts.time_limit_s > 0)) {
    char buf[64];
    snprintf(buf, sizeof(buf), "time limit %g s", opts.time_limit_s);
    return Status(Code::kDeadlineExceeded,
                  std::string(buf) + " leaves no time for the MILP");
  }
  const bool throughput = opts.objective == "throughput";
  // Shrink the candidates until the pair variables fit the budget.
  const std::vector<CandidateCaps> ladder = {
      {12, 4, 32}, {8, 3, 32}, {6, 3, 16}, {4, 2, 16}, {3, 2, 8}, {2, 1, 8}};
  std::vector<std::vector<Placement>> cand;
  CandidateCaps caps;
  int64_t columns = 0;
  for (CandidateCaps c : ladder) {
    c.replicate = throughput;
    cand.assign(U, {});
    columns = 0;
    for (int u = 0; u < U; ++u) {
      cand[u] = UnitCandidates(pr, u, c);
      columns += cand[u].size();
      if (u > 0 && units[u].reads_previous)
        columns += int64_t(cand[u].size()) * cand[u - 1].size();
    }
    caps = c;
    if (columns <= opts.max_columns) break;
  }
  if (columns > opts.max_columns) {
    return Unsupported("the MILP would need " + std::to_string(columns) +
                       " columns even with the fewest candidates (budget " +
                       std::to_string(opts.max_columns) + ")");
  }
  for (int u = 0; u < U; ++u) {
    if (cand[u].empty()) {
      return FailedPrecondition("unit " + units[u].nodes[0] +
                                " has no placement that fits the devices' "
                                "memory");
    }
  }
  GlpkProblem lp;
  const double eps = throughput ? 1e-3 : 1.0;
  std::vector<std::vector<Column>> x(U);
  for (int u = 0; u < U; ++u) {
    for (const auto& p : cand[u]) {
      Column c;
      AddLoad(pr.Price(u, p), &c);
      if (u == 0 || !units[u].reads_previous)
        AddLoad(pr.Transition(u, nullptr, p), &c);
      if (u == U - 1) AddLoad(pr.Finish(p), &c);
      c.index = lp.AddColumn(GLP_BV, eps * c.seconds);
      x[u].push_back(std::move(c));
    }
  }
  struct Pair {
    int u, a, b;
    Column c;
  };
  std::vector<Pair> pairs;
  for (int u = 0; u + 1 < U; ++u) {
    if (!units[u + 1].reads_previous) continue;
    for (size_t a = 0; a < cand[u].size(); ++a) {
      for (size_t b = 0; b < cand[u + 1].size(); ++b) {
        if (!pr.Compatible(cand[u][a], cand[u + 1][b])) continue;
        Pair p{u, int(a), int(b), {}};
        AddLoad(pr.Transition(u + 1, &cand[u][a], cand[u + 1][b]), &p.c);
        p.c.index = lp.AddColumn(GLP_CV, eps * p.c.seconds);
        pairs.push_back(std::move(p));
      }
    }
  }
  int bcol = 0;
  if (throughput) bcol = lp.AddColumn(GLP_CV, 1.0);
  // One placement per unit.
  for (int u = 0; u < U; ++u) {
    std::vector<std::pair<int, double>> one;
    for (const auto& c : x[u]) one.push_back({c.index, 1.0});
    lp.AddRow(one, GLP_FX, 1.0);
  }
  // Flow: the pair (a, b) is on exactly when a and b both are.
  {
    std::map<std::pair<int, int>, std::vector<std::pair<int, double>>> out, in;
    for (const auto& p : pairs) {
      out[{p.u, p.a}].push_back({p.c.index, 1.0});
      in[{p.u + 1, p.b}].push_back({p.c.index, 1.0});
    }
    for (int u = 0; u + 1 < U; ++u) {
      if (!units[u + 1].reads_previous) continue;
      for (size_t a = 0; a < cand[u].size(); ++a) {
        auto terms = out[{u, int(a)}];
        terms.push_back({x[u][a].index, -1.0});
        lp.AddRow(terms, GLP_FX, 0.0);
      }
      for (size_t b = 0; b < cand[u + 1].size(); ++b) {
        auto terms = in[{u + 1, int(b)}];
        terms.push_back({x[u + 1][b].index, -1.0});
        lp.AddRow(terms, GLP_FX, 0.0);
      }
    }
  }
  // Memory, and for throughput the busiest device.
  const auto& devs = pr.model().cluster().devices;
  std::map<int, std::vector<std::pair<int, double>>> mem, busy;
  for (int u = 0; u < U; ++u) {
    for (const auto& c : x[u]) {
      for (const auto& [d, w] : c.weights)
        mem[d].push_back({c.index, double(w)});
      for (const auto& [d, s] : c.busy) busy[d].push_back({c.index, s});
    }
  }
  for (const auto& p : pairs) {
    for (const auto& [d, s] : p.c.busy) busy[d].push_back({p.c.index, s});
  }
  for (auto& [d, terms] : mem) {
    if (devs[d].memory_bytes > 0)
      lp.AddRow(terms, GLP_UP, double(WeightCapacity(devs[d].memory_bytes)));
  }
  if (throughput) {
    for (auto& [d, terms] : busy) {
      terms.push_back({bcol, -1.0});
      lp.AddRow(terms, GLP_UP, 0.0);
    }
  }
  lp.Load();
  MilpResult res;
  res.caps = caps;
  res.columns = glp_get_num_cols(lp.get());
  res.rows = glp_get_num_rows(lp.get());
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const double left = opts.time_limit_s - spent;
  const std::string size = std::to_string(res.columns) + " columns, " +
                           std::to_string(res.rows) + " rows";
  if (!(left > 0)) {
    return Status(
        Code::kDeadlineExceeded,
        "pricing the candidates took the whole time limit (" + size + ")");
  }
  glp_term_out(GLP_OFF);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = static_cast<int>(std::clamp(left * 1000.0, 1.0, 2.0e9));
  parm.mip_gap = 1e-6;
  const int ret = glp_intopt(lp.get(), &parm);
  const int status = glp_mip_status(lp.get());
  const bool has = status == GLP_OPT || status == GLP_FEAS;
  if (!has) {
    if (ret == GLP_ETMLIM || ret == 0) {
      return Status(
          Code::kDeadlineExceeded,
          "the MILP (" + size + ") found no solution within the time limit");
    }
    return FailedPrecondition(
        "the MILP (" + size + ") has no solution: " +
        (ret == GLP_ENOPFS || ret == GLP_ENODFS
             ? "the memory constraints cannot all hold"
             : "glp_intopt returned " + std::to_string(ret)));
  }
  res.proven_optimal = ret == 0 && status == GLP_OPT;
  res.objective = glp_mip_obj_val(lp.get());
  res.assignment.resize(U);
  for (int u = 0; u < U; ++u) {
    int chosen = -1;
    for (size_t c = 0; c < x[u].size(); ++c) {
      if (glp_mip_col_val(lp.get(), x[u][c].index) > 0.5) chosen = int(c);
    }
    if (chosen < 0) return Internal("MILP chose no placement for a unit");
    res.assignment[u] = cand[u][chosen];
  }
  res.status = std::string(res.proven_optimal
                               ? "optimal"
                               : "time limit hit, best solution found used") +
               " (" + size + "; up to " + std::to_string(caps.whole_devices) +
               " devices whole, " + std::to_string(caps.groups) +
               " groups of up to " + std::to_string(caps.group_size) + ")";
  return res;
}

}  // namespace shoal
