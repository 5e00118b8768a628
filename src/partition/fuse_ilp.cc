#include "partition/fuse_ilp.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "partition/glpk_problem.h"
#include "partition/link_load.h"

namespace shoal {
namespace {

std::string IntoptError(int ret) {
  switch (ret) {
    case GLP_ETMLIM:
      return "the time limit ran out before any solution was found";
    case GLP_ENOPFS:
    case GLP_ENODFS:
      return "the problem has no feasible solution";
    case GLP_EBOUND:
      return "a variable has incorrect bounds";
    case GLP_EROOT:
      return "the root LP relaxation has no optimal basis";
    case GLP_EFAIL:
      return "the solver failed";
    default:
      return "glp_intopt returned " + std::to_string(ret);
  }
}

// Among equally cheap choices, LOP on a layer outside a fused pair, as the
// paper's figures have it: the solver returns whichever optimum it meets.
void PreferLop(const std::vector<ChainLayer>& chain,
               const std::vector<double>& shares, int hub, FuseChoice* choice) {
  for (size_t i = 0; i < chain.size(); ++i) {
    const Scheme s = choice->schemes[i];
    if (s != Scheme::kLip && s != Scheme::kWhole) continue;
    std::vector<Scheme> schemes = choice->schemes;
    schemes[i] = Scheme::kLop;
    auto cost = EvaluateChain(chain, schemes, shares, hub);
    if (cost.ok() && cost->communication <= choice->cost.communication) {
      choice->schemes = std::move(schemes);
      choice->cost = std::move(cost).value();
    }
  }
}

// Solves `ilp` (loaded) within the time limit; the scheme of each layer is
// the candidate whose binary col[i][c] is set.
StatusOr<FuseChoice> Solve(GlpkProblem& ilp,
                           const std::vector<std::array<int, 5>>& col,
                           double time_limit_s) {
  const size_t n = col.size();
  glp_term_out(GLP_OFF);  // GLPK prints to stdout otherwise
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;  // also solves the LP relaxation itself
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim =
      static_cast<int>(std::clamp(time_limit_s * 1000.0, 1.0, 2147483647.0));
  const int ret = glp_intopt(ilp.get(), &parm);
  const int status = glp_mip_status(ilp.get());
  const bool has_solution = status == GLP_OPT || status == GLP_FEAS;
  if ((ret != 0 && ret != GLP_ETMLIM) || !has_solution) {
    const std::string what =
        "fusion ILP over " + std::to_string(n) +
        " layers: " + IntoptError(ret != 0 ? ret : GLP_ENOPFS);
    if (ret == GLP_ETMLIM) return Status(Code::kDeadlineExceeded, what);
    return FailedPrecondition(what);
  }
  FuseChoice choice;
  choice.proven_optimal = ret == 0 && status == GLP_OPT;
  choice.schemes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int chosen = -1;
    for (int c = 0; c < static_cast<int>(kFuseCandidates.size()); ++c) {
      if (col[i][c] != 0 && glp_mip_col_val(ilp.get(), col[i][c]) > 0.5) {
        chosen = c;
      }
    }
    if (chosen < 0) return Internal("fusion ILP chose no scheme for a layer");
    choice.schemes[i] = kFuseCandidates[chosen];
  }
  return choice;
}

// The link model's link time of the chosen schemes.
Status AddLinkFigures(const std::vector<ChainLayer>& chain,
                      const std::vector<double>& shares,
                      const FuseOptions& options, FuseChoice* choice) {
  ASSIGN_OR_RETURN(
      choice->link_time,
      ChainLinkTime(chain, choice->schemes, shares, options.hub,
                    options.broadcast, options.link_rates,
                    StepCost(options.link_latency_s, options.link_rates)));
  return Status::Ok();
}

int IndexOf(Scheme s) {
  for (int c = 0; c < static_cast<int>(kFuseCandidates.size()); ++c) {
    if (kFuseCandidates[c] == s) return c;
  }
  return -1;
}

// One binary per allowed (layer, candidate), exactly one per layer (11),
// fuse2 exactly after fuse1 (12); `cost(i, c)` is its objective
// coefficient. col[i][c] is 0 where not allowed.
std::vector<std::array<int, 5>> SchemeColumns(
    GlpkProblem& ilp, const std::vector<std::array<bool, 5>>& allowed,
    const std::function<double(size_t, int)>& cost) {
  constexpr int kC = static_cast<int>(kFuseCandidates.size());
  const size_t n = allowed.size();
  std::vector<std::array<int, kC>> col(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> one;
    for (int c = 0; c < kC; ++c) {
      col[i][c] = 0;
      if (!allowed[i][c]) continue;
      col[i][c] = ilp.AddBinary(cost(i, c));
      one.push_back({col[i][c], 1.0});
    }
    ilp.AddRow(one, GLP_FX, 1.0);  // (11)
  }
  const int f1 = IndexOf(Scheme::kFuse1), f2 = IndexOf(Scheme::kFuse2);
  for (size_t i = 0; i + 1 < n; ++i) {
    // (12): s_{l+1} = f_l. AllowedSchemes allows both or neither; (13) and
    // non-fusable layers are the variables never created.
    if (col[i][f1] != 0) {
      ilp.AddRow({{col[i + 1][f2], 1.0}, {col[i][f1], -1.0}}, GLP_FX, 0.0);
    }
  }
  return col;
}

// The link objective: minimise the sum over layers of T_i, with T_i at
// least every device's scaled link load of layer i (one request's layers
// run one after the other, each waiting for its slowest transfer). A
// layer's load depends on whether the
// previous layer left its output in slices (pp, a sum of binaries) and on
// its own scheme; each product of the two is a continuous variable bounded
// below by their sum minus 1 (or by the difference, for "not pp"), at that
// bound at the optimum because its objective coefficient (the tie-break by
// total scaled load) is positive.
StatusOr<FuseChoice> SolveLinkIlp(
    const std::vector<ChainLayer>& chain, const std::vector<LayerParts>& parts,
    const std::vector<std::array<bool, 5>>& allowed,
    const std::vector<double>& shares, const FuseOptions& options) {
  const size_t n = chain.size();
  const int devices = static_cast<int>(shares.size());
  const std::vector<double> scale =
      LinkTimeScales(options.link_rates, static_cast<size_t>(devices));
  std::vector<LayerLinkTerms> terms;
  for (size_t i = 0; i < n; ++i) {
    terms.push_back(LayerLinkLoadTerms(chain, parts, i, devices, options.hub,
                                       options.broadcast));
  }
  // Tie-break: among plans with the same link time, the least total load.
  const double eps = 1e-4 / devices;
  auto weight = [&](const std::vector<int64_t>& v) {
    double w = 0;
    for (int d = 0; d < devices; ++d) w += scale[d] * static_cast<double>(v[d]);
    return eps * w;
  };
  // rows[i][d]: device d's load terms in layer i.
  std::vector<std::vector<std::vector<std::pair<int, double>>>> rows(
      n, std::vector<std::vector<std::pair<int, double>>>(devices));
  // A message's latency, paid once per exchange a layer waits for, on
  // every device's row alike.
  const double step_cost = StepCost(options.link_latency_s, options.link_rates);
  auto charge = [&](size_t i, int var, const std::vector<int64_t>& v,
                    int steps) {
    for (int d = 0; d < devices; ++d) {
      const double c = scale[d] * static_cast<double>(v[d]) + step_cost * steps;
      if (c != 0) rows[i][d].push_back({var, c});
    }
  };
  GlpkProblem ilp;
  const int lop = IndexOf(Scheme::kLop), f1 = IndexOf(Scheme::kFuse1),
            f2 = IndexOf(Scheme::kFuse2), lip = IndexOf(Scheme::kLip),
            whole = IndexOf(Scheme::kWhole);
  // Loads (and exchanges) that follow from a layer's own scheme alone.
  auto own_steps = [&](size_t i, int c) {
    const bool last = i + 1 == n;
    int steps = 0;
    if (c == lip || c == f2) steps += 1 + (last ? 1 : 0);
    if (c == lop && last) steps += 1;
    if (i == 0 && (c == lop || c == f1)) steps += terms[0].tree_depth;
    if (i == 0 && c == lip) steps += 1;
    return steps;
  };
  auto own = [&](size_t i, int c) {
    const LayerLinkTerms& t = terms[i];
    const bool last = i + 1 == n;
    std::vector<int64_t> v(devices, 0);
    auto add = [&](const std::vector<int64_t>& a) {
      for (int d = 0; d < devices; ++d) v[d] += a[d];
    };
    if (c == lip || c == f2) {
      add(t.reduce);
      if (last) add(t.out_sums);
    }
    if (c == lop && last) add(t.out_lop);
    // The first layer's input is on the hub.
    if (i == 0 && (c == lop || c == f1)) add(t.broadcast);
    if (i == 0 && c == lip) add(t.lip_from_hub);
    return v;
  };
  // And among those, the papers' least C: a fused pair moves what LOP then
  // an aligned LIP would, but as one task per device, which the paper's C
  // (LOP sends its output to the hub) prefers.
  constexpr double kPaperTieBreak = 1e-5;
  auto col = SchemeColumns(ilp, allowed, [&](size_t i, int c) {
    return weight(own(i, c)) +
           kPaperTieBreak *
               static_cast<double>(BaseCommunication(
                   chain[i], parts[i], kFuseCandidates[c], options.hub));
  });
  for (size_t i = 0; i < n; ++i) {
    for (int c = 0; c < static_cast<int>(kFuseCandidates.size()); ++c) {
      if (col[i][c] != 0) charge(i, col[i][c], own(i, c), own_steps(i, c));
    }
  }
  // The products of "previous layer left parts" and this layer's scheme.
  auto sum_of = [&](size_t i, std::initializer_list<int> cs, double sign) {
    std::vector<std::pair<int, double>> t;
    for (int c : cs) {
      if (col[i][c] != 0) t.push_back({col[i][c], sign});
    }
    return t;
  };
  for (size_t i = 1; i < n; ++i) {
    const auto pp = sum_of(i - 1, {lop, lip, f2}, 1.0);
    const auto not_pp = sum_of(i - 1, {lop, lip, f2}, -1.0);
    const LayerLinkTerms& t = terms[i];
    // var >= sum(this) + pp - 1, or var >= sum(this) - pp.
    auto product = [&](std::initializer_list<int> cs, bool with_parts,
                       const std::vector<int64_t>& load, int steps) {
      auto row = sum_of(i, cs, 1.0);
      if (row.empty()) return;
      bool any = steps > 0 && step_cost > 0;
      for (int64_t x : load) any = any || x != 0;
      if (!any) return;
      const int var = ilp.AddColumn(GLP_CV, weight(load) + eps * steps);
      const auto& prev = with_parts ? pp : not_pp;
      row.insert(row.end(), prev.begin(), prev.end());
      row.push_back({var, -1.0});
      ilp.AddRow(row, GLP_UP, with_parts ? 1.0 : 0.0);
      charge(i, var, load, steps);
    };
    product({lop, f1}, true, t.gather, t.tree_depth);
    product({lop, f1}, false, t.broadcast, t.tree_depth);
    product({lip}, true, t.lip_after_parts, t.lip_after_parts_moves ? 1 : 0);
    product({lip}, false, t.lip_from_hub, 1);
    product({whole}, true, t.whole_after_parts, 1);
  }
  std::vector<int> busiest(n);
  for (size_t i = 0; i < n; ++i) {
    busiest[i] = ilp.AddColumn(GLP_CV, 1.0);
    for (int d = 0; d < devices; ++d) {
      if (rows[i][d].empty()) continue;
      rows[i][d].push_back({busiest[i], -1.0});
      ilp.AddRow(rows[i][d], GLP_UP, 0.0);
    }
  }
  ilp.Load();
  ASSIGN_OR_RETURN(FuseChoice choice, Solve(ilp, col, options.time_limit_s));
  double objective = 0;
  for (int b : busiest) objective += glp_mip_col_val(ilp.get(), b);
  RETURN_IF_ERROR(AddLinkFigures(chain, shares, options, &choice));
  // At the optimum every product variable is at its bound, so the ILP's
  // link time and the load model's must agree, or the ILP is built wrong.
  if (choice.proven_optimal &&
      std::abs(objective - choice.link_time) >
          1e-6 * std::max(1.0, choice.link_time) + 0.5) {
    return Internal("fusion ILP link time " + std::to_string(objective) +
                    " differs from the load model's " +
                    std::to_string(choice.link_time));
  }
  return choice;
}

}  // namespace

StatusOr<FuseChoice> SolveFuseIlp(const std::vector<ChainLayer>& chain,
                                  const std::vector<double>& shares,
                                  const FuseOptions& options) {
  ASSIGN_OR_RETURN(std::vector<LayerParts> parts, SplitChain(chain, shares));
  RETURN_IF_ERROR(ValidateHub(options.hub, shares));
  ASSIGN_OR_RETURN(auto allowed, AllowedSchemes(chain, parts, options));
  if (!(options.time_limit_s > 0)) {
    return InvalidArgument("ILP time limit must be > 0 seconds, not " +
                           std::to_string(options.time_limit_s));
  }
  if (options.objective == FuseObjective::kLinkTime) {
    // No LIP on a layer that reads a concat of tensors made at different
    // points (YOLOv2's layer 29): a device whose input slice lies in the
    // earlier one starts its whole share as soon as that is there, and
    // while it runs it holds up the layers on the path to the other one
    // (a task, once started, runs to its end). The link model cannot see
    // that; the paper's C happens not to choose LIP there.
    const int lip = IndexOf(Scheme::kLip);
    for (size_t i = 0; i < chain.size(); ++i) {
      const ChainLayer& l = chain[i];
      const bool mixed =
          l.input_is_concat ||
          (l.reuses_prev && l.reuse_elements > 0 && l.reuse_elements < l.M);
      bool other = false;
      for (int c = 0; c < static_cast<int>(kFuseCandidates.size()); ++c) {
        other = other || (c != lip && allowed[i][c]);
      }
      if (mixed && other) allowed[i][lip] = false;
    }
    ASSIGN_OR_RETURN(FuseChoice choice,
                     SolveLinkIlp(chain, parts, allowed, shares, options));
    ASSIGN_OR_RETURN(choice.cost,
                     EvaluateChain(chain, choice.schemes, shares, options.hub));
    return choice;
  }
  const size_t n = chain.size();
  GlpkProblem ilp;
  auto col = SchemeColumns(ilp, allowed, [&](size_t i, int c) {
    return static_cast<double>(
        BaseCommunication(chain[i], parts[i], kFuseCandidates[c], options.hub));
  });
  const int lop = IndexOf(Scheme::kLop), f1 = IndexOf(Scheme::kFuse1);
  for (size_t i = 1; i < n; ++i) {
    const int64_t reusable =
        ReusableElements(chain[i], chain[i - 1], parts[i - 1], options.hub);
    if (reusable == 0 || col[i - 1][lop] == 0) continue;
    if (col[i][lop] == 0 && col[i][f1] == 0) continue;
    const int y = ilp.AddBinary(-static_cast<double>(reusable));
    ilp.AddRow({{y, 1.0}, {col[i - 1][lop], -1.0}}, GLP_UP, 0.0);
    std::vector<std::pair<int, double>> holds = {{y, 1.0}};
    if (col[i][lop] != 0) holds.push_back({col[i][lop], -1.0});
    if (col[i][f1] != 0) holds.push_back({col[i][f1], -1.0});
    ilp.AddRow(holds, GLP_UP, 0.0);
  }
  ilp.Load();
  ASSIGN_OR_RETURN(FuseChoice choice, Solve(ilp, col, options.time_limit_s));
  ASSIGN_OR_RETURN(choice.cost,
                   EvaluateChain(chain, choice.schemes, shares, options.hub));
  // At the optimum every reuse binary that may be 1 is, so the objective and
  // the cost model must agree, or the ILP is built wrong.
  const double objective = glp_mip_obj_val(ilp.get());
  if (choice.proven_optimal &&
      std::llround(objective) != choice.cost.communication) {
    return Internal("fusion ILP objective " + std::to_string(objective) +
                    " differs from the cost model's C " +
                    std::to_string(choice.cost.communication));
  }
  PreferLop(chain, shares, options.hub, &choice);
  RETURN_IF_ERROR(AddLinkFigures(chain, shares, options, &choice));
  return choice;
}

}  // namespace shoal
