#include "partition/plan_model.h"

#include "graph/fuse_batchnorm.h"
#include "lcp/split_branches.h"
#include "models/load_model.h"
#include "models/zoo.h"

namespace shoal {

StatusOr<Model> LoadPlanModel(const ModelRef& ref, bool with_weights) {
  LoadOptions lo;
  if (!ref.input_shape.empty()) lo.input_shape = ref.input_shape;
  lo.seed = ref.weights_seed;
  if (ref.lcp_branches <= 0) {
    lo.with_weights = with_weights;
    lo.fuse_batchnorm = ref.fuse_batchnorm;
    return LoadModel(ref.spec, lo);
  }
  // Branched on the fly: the same model `shoal lcp split SPEC --branches K
  // --fatten P --weights-seed S -o M.onnx` writes, so every process
  // (coordinator,
  // --check) rebuilds it from the plan alone.
  ASSIGN_OR_RETURN(Model base, LoadModel(ref.spec, lo));
  Model m;
  ASSIGN_OR_RETURN(m.graph, SplitIntoBranches(base.graph, {ref.lcp_branches,
                                                           ref.lcp_fatten_pct,
                                                           ref.lcp_shares}));
  if (with_weights) m.weights = RandomWeights(m.graph, ref.weights_seed);
  if (ref.fuse_batchnorm) RETURN_IF_ERROR(FuseBatchNorm(&m).status());
  return m;
}

}  // namespace shoal
