#include "partition/fuse_ilp.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "partition/glpk_problem.h"

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
  constexpr int kC = static_cast<int>(kFuseCandidates.size());
  const size_t n = chain.size();
  GlpkProblem ilp;
  // col[i][c]: the binary of layer i under candidate c, 0 when not allowed.
  std::vector<std::array<int, kC>> col(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> one;
    for (int c = 0; c < kC; ++c) {
      col[i][c] = 0;
      if (!allowed[i][c]) continue;
      col[i][c] = ilp.AddBinary(static_cast<double>(BaseCommunication(
          chain[i], parts[i], kFuseCandidates[c], options.hub)));
      one.push_back({col[i][c], 1.0});
    }
    ilp.AddRow(one, GLP_FX, 1.0);  // (11)
  }
  auto index_of = [](Scheme s) {
    for (int c = 0; c < kC; ++c) {
      if (kFuseCandidates[c] == s) return c;
    }
    return -1;
  };
  const int lop = index_of(Scheme::kLop), f1 = index_of(Scheme::kFuse1),
            f2 = index_of(Scheme::kFuse2);
  for (size_t i = 0; i + 1 < n; ++i) {
    // (12): s_{l+1} = f_l. AllowedSchemes allows both or neither; (13) and
    // non-fusable layers are the variables never created.
    if (col[i][f1] != 0) {
      ilp.AddRow({{col[i + 1][f2], 1.0}, {col[i][f1], -1.0}}, GLP_FX, 0.0);
    }
  }
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

  glp_term_out(GLP_OFF);  // GLPK prints to stdout otherwise
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;  // also solves the LP relaxation itself
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = static_cast<int>(
      std::clamp(options.time_limit_s * 1000.0, 1.0, 2147483647.0));
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
    for (int c = 0; c < kC; ++c) {
      if (col[i][c] != 0 && glp_mip_col_val(ilp.get(), col[i][c]) > 0.5) {
        chosen = c;
      }
    }
    if (chosen < 0) return Internal("fusion ILP chose no scheme for a layer");
    choice.schemes[i] = kFuseCandidates[chosen];
  }
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
  return choice;
}

}  // namespace shoal
