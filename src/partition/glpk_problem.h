// A GLPK problem built row by row in GLPK's 1-based triplet form: the one
// wrapper the fusion ILP (partition/fuse_ilp.cc) and the planner's joint MILP
// (planner/joint_milp.cc) build their models with.
#ifndef SHOAL_PARTITION_GLPK_PROBLEM_H_
#define SHOAL_PARTITION_GLPK_PROBLEM_H_

#include <glpk.h>

#include <memory>
#include <utility>
#include <vector>

namespace shoal {

class GlpkProblem {
 public:
  GlpkProblem() : lp_(glp_create_prob()) {
    glp_set_obj_dir(lp_.get(), GLP_MIN);
    ia_.push_back(0), ja_.push_back(0), ar_.push_back(0);
  }
  glp_prob* get() { return lp_.get(); }

  // A column of `kind` (GLP_BV, GLP_CV: continuous, >= 0) with its
  // objective coefficient; returns its index.
  int AddColumn(int kind, double objective) {
    const int j = glp_add_cols(lp_.get(), 1);
    glp_set_col_kind(lp_.get(), j, kind);
    if (kind == GLP_CV) glp_set_col_bnds(lp_.get(), j, GLP_LO, 0, 0);
    glp_set_obj_coef(lp_.get(), j, objective);
    return j;
  }
  int AddBinary(double objective) { return AddColumn(GLP_BV, objective); }

  // sum coef * x over terms, bounded by `type` (GLP_FX, GLP_UP) and `bound`.
  void AddRow(const std::vector<std::pair<int, double>>& terms, int type,
              double bound) {
    const int i = glp_add_rows(lp_.get(), 1);
    glp_set_row_bnds(lp_.get(), i, type, bound, bound);
    for (const auto& [j, coef] : terms) {
      ia_.push_back(i), ja_.push_back(j), ar_.push_back(coef);
    }
  }
  void Load() {
    glp_load_matrix(lp_.get(), static_cast<int>(ia_.size()) - 1, ia_.data(),
                    ja_.data(), ar_.data());
  }

 private:
  struct Deleter {
    void operator()(glp_prob* p) const { glp_delete_prob(p); }
  };
  std::unique_ptr<glp_prob, Deleter> lp_;
  std::vector<int> ia_, ja_;
  std::vector<double> ar_;
};

}  // namespace shoal

#endif  // SHOAL_PARTITION_GLPK_PROBLEM_H_
