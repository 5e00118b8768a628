// Add, Sub, Mul, Div with numpy broadcasting.
#include "graph/op_registry.h"

namespace shoal {
namespace {

Status InferBroadcast(const Node& node, const InputShapes& in,
                      std::vector<Shape>* out) {
  const Shape& a = in[0];
  const Shape& b = in[1];
  size_t r = std::max(a.size(), b.size());
  Shape y(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) {
      return ShapeError(node, "shapes " + ShapeToString(a) + " and " +
                                  ShapeToString(b) + " do not broadcast");
    }
    y[i] = std::max(da, db);
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
SHOAL_REGISTER_OP("Div")
    .Doc(kBroadcastDoc)
    .Inputs(2, 2)
    .Elementwise()
    .Infer(InferBroadcast);

}  // namespace
}  // namespace shoal
