// Add, Sub, Mul, Div, Pow and Where with numpy broadcasting.
#include "graph/op_registry.h"

namespace shoal {
namespace {

Status InferBroadcast(const Node& node, const InputShapes& in,
                      std::vector<Shape>* out) {
  Shape y = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    const Shape& b = in[k];
    const Shape a = y;
    const size_t r = std::max(a.size(), b.size());
    y.assign(r, 1);
    for (size_t i = 0; i < r; ++i) {
      int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
      int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
      if (da != db && da != 1 && db != 1) {
        std::string shapes;
        for (size_t j = 0; j < in.size(); ++j)
          shapes += (j ? " and " : "") + ShapeToString(in[j]);
        return ShapeError(node, "shapes " + shapes + " do not broadcast");
      }
      y[i] = std::max(da, db);
    }
  }
  (*out)[0] = y;
  return Status::Ok();
}

constexpr char kBroadcastDoc[] = "A, B -> numpy broadcast of A and B";

SHOAL_REGISTER_OP("Add")
    .Doc(kBroadcastDoc)
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);
SHOAL_REGISTER_OP("Sub")
    .Doc(kBroadcastDoc)
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);
SHOAL_REGISTER_OP("Mul")
    .Doc(kBroadcastDoc)
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);
SHOAL_REGISTER_OP("Pow")
    .Doc("X, Y -> numpy broadcast of X and Y, X to the power Y")
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);
// The condition is f32 like every tensor: nonzero selects X.
SHOAL_REGISTER_OP("Where")
    .Doc("condition, X, Y -> numpy broadcast of the three")
    .Inputs(3, 3)
    .Elementwise()
    .Infer(InferBroadcast);
SHOAL_REGISTER_OP("Div")
    .Doc(kBroadcastDoc)
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);

}  // namespace
}  // namespace shoal
