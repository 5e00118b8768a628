#include "engine/run_whole.h"

namespace shoal {

StatusOr<Tensor> RunWhole(const Model& m, const Tensor& x,
                          const ExecutorOptions& o) {
  ASSIGN_OR_RETURN(auto ex, Executor::Create(m.graph, m.weights, o));
  std::vector<Tensor> out;
  RETURN_IF_ERROR(ex->Run({x}, &out));
  if (out.empty()) return Internal("model " + m.graph.name + " has no output");
  return std::move(out[0]);
}

}  // namespace shoal
