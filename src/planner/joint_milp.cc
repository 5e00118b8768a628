#include "planner/joint_milp.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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

DeviceClasses ClassifyDevices(const LatencyModel& m, int hub) {
  DeviceClasses c;
  c.of.assign(m.num_devices(), -1);
  for (int d : SpeedOrder(m, hub)) {
    // Few classes in practice, so comparing with each one's first member
    // keeps this linear in the devices.
    for (size_t k = 0; k < c.members.size() && d != hub; ++k) {
      const int r = c.members[k][0];
      if (r != hub && m.SameDevice(r, d)) {
        c.of[d] = static_cast<int>(k);
        break;
      }
    }
    if (c.of[d] < 0) {
      c.of[d] = static_cast<int>(c.members.size());
      c.members.push_back({});
    }
    c.members[c.of[d]].push_back(d);
  }
  return c;
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
  std::vector<int> order =
      caps.whole.empty() ? SpeedOrder(pr.model(), pr.hub()) : caps.whole;
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

// Gives each unit the MILP placed whole on a class's first device (standing
// for the class) a device of that class: consecutive units stay on one
// device until its memory, less what splits put there, is full, then move
// to the class's next device. The moves cost transfers the MILP did not
// price; PredictPlan prices the Plan that results. A device is full by the
// plan's own rule (CheckPlanMemory: its weights and its largest weight once
// more), with each unit's or part's bytes standing for its largest
// weight, so that the packed Plan is not dropped for memory (a class of
// one device keeps the MILP's placement).
Status SpreadOverClasses(const UnitPricer& pr, const DeviceClasses& dc,
                         Assignment* a) {
  const auto& devs = pr.model().cluster().devices;
  std::vector<int64_t> used(devs.size(), 0), big(devs.size(), 0);
  for (size_t u = 0; u < a->size(); ++u) {
    if ((*a)[u].form == Form::kWhole) continue;
    for (const auto& [d, w] : pr.Price(int(u), (*a)[u]).weights) {
      used[d] += w;
      big[d] = std::max(big[d], w);
    }
  }
  std::vector<size_t> at(dc.members.size(), 0);
  for (size_t u = 0; u < a->size(); ++u) {
    Placement& p = (*a)[u];
    if (p.form != Form::kWhole) continue;
    const int k = dc.of[p.devices[0]];
    const std::vector<int>& m = dc.members[k];
    // A class of one is a device the MILP's own row held; whatever the
    // reorder needs beyond it is auto's to find (ReserveReorderRoom).
    const bool alone = m.size() == 1;
    int64_t w = 0;
    for (const auto& [d, b] : pr.Price(int(u), p).weights) w += b;
    for (; at[k] < m.size(); ++at[k]) {
      const int d = m[at[k]];
      const int64_t mem = devs[d].memory_bytes;
      if (mem <= 0 ||
          (used[d] + w <= pr.Capacity(d) &&
           (alone ||
            DeviceWeightMemory(used[d] + w, std::max(big[d], w)) <= mem))) {
        break;
      }
    }
    if (at[k] == m.size()) {
      return FailedPrecondition("the MILP's whole placements on the " +
                                std::to_string(m.size()) + " devices like " +
                                devs[m[0]].name +
                                " do not fit them one by one in order");
    }
    p.devices[0] = m[at[k]];
    used[p.devices[0]] += w;
    big[p.devices[0]] = std::max(big[p.devices[0]], w);
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The joint MILP over one pricer: binary columns x[u][i] (unit u placed by
// its i-th candidate), continuous pair columns for consecutive units'
// transitions, for grouped devices a hop column per class, and for
// throughput the busiest device's time.
class JointMilp {
 public:
  JointMilp(const UnitPricer& pr, const MilpOptions& opts)
      : pr_(pr),
        opts_(opts),
        units_(pr.units()),
        n_units_(static_cast<int>(units_.size())),
        throughput_(opts.objective == PlanObjective::kThroughput),
        // For latency, equal devices are interchangeable: one
        // whole-placement variable per class (its first device) instead of
        // per device removes the MILP's symmetric solutions, which GLPK
        // otherwise explores one by one (1000 devices of 6 kinds found no
        // solution in 10 s). Up to the whole-placement cap every device
        // keeps its own variables, so small clusters' plans are exactly as
        // before (and the intra-class moves are priced); past it the cap
        // would drop devices anyway.
        grouped_(!throughput_ && opts.group_equal_devices &&
                 pr.model().num_devices() > opts.group_above),
        // Throughput minimises the busiest device; latency's sum counts
        // whole. The small weight keeps throughput's ties on latency.
        eps_(throughput_ ? 1e-3 : 1.0) {}

  StatusOr<MilpResult> Solve() {
    const auto start = std::chrono::steady_clock::now();
    if (n_units_ == 0)
      return InvalidArgument("the model has no layers to place");
    if (!(opts_.time_limit_s > 0)) {
      char buf[64];
      snprintf(buf, sizeof(buf), "time limit %g s", opts_.time_limit_s);
      return Status(Code::kDeadlineExceeded,
                    std::string(buf) + " leaves no time for the MILP");
    }
    if (grouped_) {
      classes_ = ClassifyDevices(pr_.model(), pr_.hub());
      for (int d : SpeedOrder(pr_.model(), pr_.hub())) {
        if (classes_.members[classes_.of[d]][0] == d) whole_.push_back(d);
      }
    }
    RETURN_IF_ERROR(ChooseCandidates());
    AddColumns();
    AddPlacementAndFlowRows();
    AddMemoryAndBusyRows();
    lp_.Load();
    MilpResult res;
    res.caps = caps_;
    res.columns = glp_get_num_cols(lp_.get());
    res.rows = glp_get_num_rows(lp_.get());
    size_ = std::to_string(res.columns) + " columns, " +
            std::to_string(res.rows) + " rows";
    glp_term_out(GLP_OFF);
    std::string note;
    for (int attempt = 0;; ++attempt) {
      const double spent = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
      RETURN_IF_ERROR(SolveOnce(opts_.time_limit_s - spent, attempt, &res));
      if (!grouped_) break;
      res.classes = static_cast<int>(classes_.members.size());
      // When the units pack into more devices than the MILP counted (its
      // memory row holds a class's sum, not each device's share), the
      // extra hops are left to PredictPlan, which prices the Plan auto
      // compares with Procedure 1's; solving again with slack made answers
      // worse.
      Status spread = SpreadOverClasses(pr_, classes_, &res.assignment);
      if (spread.ok()) break;
      if (attempt > 0) return spread;
      LeaveSlackInClasses();
      note =
          "; solved again with 1.5 units' slack per device, as the first "
          "answer did not pack into the class's devices";
    }
    res.status =
        std::string(res.proven_optimal
                        ? "optimal"
                        : "time limit hit, best solution found used") +
        " (" + size_ + "; up to " + std::to_string(caps_.whole_devices) +
        " devices whole, " + std::to_string(caps_.groups) +
        " groups of up to " + std::to_string(caps_.group_size) +
        (grouped_
             ? "; " + std::to_string(res.classes) + " classes of equal devices"
             : "") +
        note + ")";
    return res;
  }

 private:
  struct Pair {
    int u, a, b;
    Column c;
  };

  // Shrinks the candidates until the pair variables fit the budget.
  Status ChooseCandidates() {
    const std::vector<CandidateCaps> ladder = {
        {12, 4, 32, false, {}}, {8, 3, 32, false, {}}, {6, 3, 16, false, {}},
        {4, 2, 16, false, {}},  {3, 2, 8, false, {}},  {2, 1, 8, false, {}}};
    int64_t columns = 0;
    for (CandidateCaps c : ladder) {
      c.replicate = throughput_;
      c.whole = whole_;
      cand_.assign(n_units_, {});
      columns = 0;
      for (int u = 0; u < n_units_; ++u) {
        cand_[u] = UnitCandidates(pr_, u, c);
        columns += cand_[u].size();
        if (u > 0 && units_[u].reads_previous)
          columns += int64_t(cand_[u].size()) * cand_[u - 1].size();
      }
      caps_ = c;
      if (columns <= opts_.max_columns) break;
    }
    if (columns > opts_.max_columns) {
      return Unsupported("the MILP would need " + std::to_string(columns) +
                         " columns even with the fewest candidates (budget " +
                         std::to_string(opts_.max_columns) + ")");
    }
    for (int u = 0; u < n_units_; ++u) {
      if (cand_[u].empty()) {
        return FailedPrecondition("unit " + units_[u].nodes[0] +
                                  " has no placement that fits the devices' "
                                  "memory");
      }
    }
    return Status::Ok();
  }

  void AddColumns() {
    x_.assign(n_units_, {});
    for (int u = 0; u < n_units_; ++u) {
      for (const auto& p : cand_[u]) {
        Column c;
        AddLoad(pr_.Price(u, p), &c);
        if (u == 0 || !units_[u].reads_previous)
          AddLoad(pr_.Transition(u, nullptr, p), &c);
        if (u == n_units_ - 1) AddLoad(pr_.Finish(p), &c);
        c.index = lp_.AddColumn(GLP_BV, eps_ * c.seconds);
        x_[u].push_back(std::move(c));
      }
    }
    for (int u = 0; u + 1 < n_units_; ++u) {
      if (!units_[u + 1].reads_previous) continue;
      for (size_t a = 0; a < cand_[u].size(); ++a) {
        for (size_t b = 0; b < cand_[u + 1].size(); ++b) {
          if (!pr_.Compatible(cand_[u][a], cand_[u + 1][b])) continue;
          Pair p{u, int(a), int(b), {}};
          AddLoad(pr_.Transition(u + 1, &cand_[u][a], cand_[u + 1][b]), &p.c);
          p.c.index = lp_.AddColumn(GLP_CV, eps_ * p.c.seconds);
          pairs_.push_back(std::move(p));
        }
      }
    }
    // Grouped: per class of equal devices, how many devices beyond the
    // first its whole units fill. Each is a hop of a unit's output between
    // two of them, which the transitions on the class's first device do
    // not see; priced at the smallest unit output and kept continuous (an
    // integer made 1000 devices unsolvable in 10 s), so a lower bound on
    // the hops.
    if (grouped_) {
      int64_t out = units_[0].output_bytes;
      for (const auto& unit : units_) out = std::min(out, unit.output_bytes);
      for (size_t k = 0; k < classes_.members.size(); ++k) {
        const auto& m = classes_.members[k];
        if (m.size() < 2 ||
            pr_.model().cluster().devices[m[0]].memory_bytes <= 0)
          continue;
        const int j = lp_.AddColumn(
            GLP_CV, eps_ * pr_.model().TransferSeconds(m[0], m[1], out));
        glp_set_col_bnds(lp_.get(), j, GLP_DB, 0, double(m.size() - 1));
        hop_col_[int(k)] = j;
      }
    }
    if (throughput_) busiest_col_ = lp_.AddColumn(GLP_CV, 1.0);
  }

  // One placement per unit; a pair (a, b) is on exactly when a and b are.
  void AddPlacementAndFlowRows() {
    for (int u = 0; u < n_units_; ++u) {
      std::vector<std::pair<int, double>> one;
      for (const auto& c : x_[u]) one.push_back({c.index, 1.0});
      lp_.AddRow(one, GLP_FX, 1.0);
    }
    std::map<std::pair<int, int>, std::vector<std::pair<int, double>>> out, in;
    for (const auto& p : pairs_) {
      out[{p.u, p.a}].push_back({p.c.index, 1.0});
      in[{p.u + 1, p.b}].push_back({p.c.index, 1.0});
    }
    for (int u = 0; u + 1 < n_units_; ++u) {
      if (!units_[u + 1].reads_previous) continue;
      for (size_t a = 0; a < cand_[u].size(); ++a) {
        auto terms = out[{u, int(a)}];
        terms.push_back({x_[u][a].index, -1.0});
        lp_.AddRow(terms, GLP_FX, 0.0);
      }
      for (size_t b = 0; b < cand_[u + 1].size(); ++b) {
        auto terms = in[{u + 1, int(b)}];
        terms.push_back({x_[u + 1][b].index, -1.0});
        lp_.AddRow(terms, GLP_FX, 0.0);
      }
    }
  }

  bool Pooled(int d) const {
    return grouped_ && classes_.members[classes_.of[d]].size() > 1;
  }

  // A class's devices are alike but for the room auto reserved on some:
  // count each with the least of them.
  int64_t ClassCapacity(int k) const {
    int64_t cap = pr_.Capacity(classes_.members[k][0]);
    for (int d : classes_.members[k]) cap = std::min(cap, pr_.Capacity(d));
    return cap;
  }

  // Memory, and for throughput the busiest device. A whole placement on a
  // class's first device stands for any device of the class, so it counts
  // against the class's memory together; splits name their devices, so
  // theirs count against the device as well.
  void AddMemoryAndBusyRows() {
    const auto& devs = pr_.model().cluster().devices;
    std::map<int, std::vector<std::pair<int, double>>> mem, busy;
    std::map<int, std::map<int, double>> class_mem;  // class -> col -> bytes
    for (int u = 0; u < n_units_; ++u) {
      for (size_t i = 0; i < x_[u].size(); ++i) {
        const Column& c = x_[u][i];
        const bool one = cand_[u][i].form == Form::kWhole;
        for (const auto& [d, w] : c.weights) {
          if (Pooled(d)) class_mem[classes_.of[d]][c.index] += double(w);
          if (!Pooled(d) || !one) mem[d].push_back({c.index, double(w)});
        }
        for (const auto& [d, s] : c.busy) busy[d].push_back({c.index, s});
      }
    }
    for (const auto& p : pairs_) {
      for (const auto& [d, s] : p.c.busy) busy[d].push_back({p.c.index, s});
    }
    for (auto& [d, terms] : mem) {
      if (devs[d].memory_bytes > 0)
        lp_.AddRow(terms, GLP_UP, double(pr_.Capacity(d)));
    }
    // A class's weights fit its devices in use: sum <= cap (1 + hops).
    for (const auto& [k, cols] : class_mem) {
      const auto& m = classes_.members[k];
      if (devs[m[0]].memory_bytes <= 0) continue;
      const double cap = double(ClassCapacity(k));
      std::vector<std::pair<int, double>> terms(cols.begin(), cols.end());
      if (hop_col_.count(k)) terms.push_back({hop_col_.at(k), -cap});
      lp_.AddRow(terms, GLP_UP, cap);
      class_rows_.push_back({glp_get_num_rows(lp_.get()), k});
    }
    if (throughput_) {
      for (auto& [d, terms] : busy) {
        terms.push_back({busiest_col_, -1.0});
        lp_.AddRow(terms, GLP_UP, 0.0);
      }
    }
  }

  // One glp_intopt within `left` seconds; fills the assignment.
  Status SolveOnce(double left, int attempt, MilpResult* res) {
    if (!(left > 0)) {
      return Status(Code::kDeadlineExceeded,
                    std::string(attempt == 0 ? "pricing the candidates"
                                             : "the first solve") +
                        " took the whole time limit (" + size_ + ")");
    }
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = static_cast<int>(std::clamp(left * 1000.0, 1.0, 2.0e9));
    parm.mip_gap = 1e-6;
    const int ret = glp_intopt(lp_.get(), &parm);
    const int status = glp_mip_status(lp_.get());
    const bool has = status == GLP_OPT || status == GLP_FEAS;
    if (!has) {
      if (ret == GLP_ETMLIM || ret == 0) {
        return Status(
            Code::kDeadlineExceeded,
            "the MILP (" + size_ + ") found no solution within the time limit");
      }
      return FailedPrecondition(
          "the MILP (" + size_ + ") has no solution: " +
          (ret == GLP_ENOPFS || ret == GLP_ENODFS
               ? "the memory constraints cannot all hold"
               : "glp_intopt returned " + std::to_string(ret)));
    }
    res->proven_optimal = ret == 0 && status == GLP_OPT;
    res->objective = glp_mip_obj_val(lp_.get());
    res->assignment.assign(n_units_, Placement{});
    for (int u = 0; u < n_units_; ++u) {
      int chosen = -1;
      for (size_t c = 0; c < x_[u].size(); ++c) {
        if (glp_mip_col_val(lp_.get(), x_[u][c].index) > 0.5) chosen = int(c);
      }
      if (chosen < 0) return Internal("MILP chose no placement for a unit");
      res->assignment[u] = cand_[u][chosen];
    }
    return Status::Ok();
  }

  // The units did not pack into a class at all. Packing in order always
  // succeeds when each device is left one and a half units' weights of
  // slack (a device is passed over only when fuller than its capacity less
  // a unit, or than half its memory less the unit and the largest weight,
  // which is at least capacity less 1.5 units): the class rows shrink by
  // that much.
  void LeaveSlackInClasses() {
    int64_t unit_max = 0;
    for (const auto& unit : units_)
      unit_max = std::max(unit_max, unit.weight_bytes);
    const int64_t slack = unit_max + (unit_max + 1) / 2;
    for (const auto& [row, k] : class_rows_) {
      const double cap = double(std::max<int64_t>(0, ClassCapacity(k) - slack));
      glp_set_row_bnds(lp_.get(), row, GLP_UP, cap, cap);
      if (!hop_col_.count(k)) continue;
      // GLPK's arrays are 1-based.
      const int n = glp_get_mat_row(lp_.get(), row, nullptr, nullptr);
      std::vector<int> ind(n + 1);
      std::vector<double> val(n + 1);
      glp_get_mat_row(lp_.get(), row, ind.data(), val.data());
      for (int i = 1; i <= n; ++i) {
        if (ind[i] == hop_col_.at(k)) val[i] = -cap;
      }
      glp_set_mat_row(lp_.get(), row, n, ind.data(), val.data());
    }
  }

  const UnitPricer& pr_;
  const MilpOptions& opts_;
  const std::vector<PlanUnit>& units_;
  const int n_units_;
  const bool throughput_;
  const bool grouped_;
  const double eps_;
  DeviceClasses classes_;
  std::vector<int> whole_;  // grouped: each class's first device
  std::vector<std::vector<Placement>> cand_;
  CandidateCaps caps_;
  GlpkProblem lp_;
  std::vector<std::vector<Column>> x_;
  std::vector<Pair> pairs_;
  std::map<int, int> hop_col_;  // class -> column
  int busiest_col_ = 0;
  std::vector<std::pair<int, int>> class_rows_;  // (row, class)
  std::string size_;                             // columns and rows, words
};

}  // namespace

StatusOr<MilpResult> SolveJointMilp(const UnitPricer& pr,
                                    const MilpOptions& opts) {
  return JointMilp(pr, opts).Solve();
}

}  // namespace shoal
