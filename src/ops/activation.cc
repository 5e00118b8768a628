// Unary elementwise ops and Softmax: the output has the input's shape.
#include "graph/op_registry.h"

namespace shoal {
namespace {

Status SameShape(const Node&, const InputShapes& in, std::vector<Shape>* out) {
  (*out)[0] = in[0];
  return Status::Ok();
}

constexpr char kSameShape[] = "any shape -> the same shape";

SHOAL_REGISTER_OP("Relu")
    .Doc(kSameShape)
    .Elementwise()
    .SparseOutput()
    .Infer(SameShape);
SHOAL_REGISTER_OP("LeakyRelu")
    .Doc(kSameShape)
    .Attr("alpha")
    .Elementwise()
    .Infer(SameShape);
// Clip's bounds are attributes in shoal (ONNX opset >= 11 inputs are folded).
SHOAL_REGISTER_OP("Clip")
    .Doc(kSameShape)
    .Attr("min")
    .Attr("max")
    .Elementwise()
    .Infer(SameShape);
SHOAL_REGISTER_OP("Sigmoid").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("HardSwish").Doc(kSameShape).Elementwise().Infer(SameShape);
// ONNX HardSigmoid: max(0, min(1, alpha * x + beta)).
SHOAL_REGISTER_OP("HardSigmoid")
    .Doc(kSameShape)
    .Attr("alpha")
    .Attr("beta")
    .Elementwise()
    .Infer(SameShape);
SHOAL_REGISTER_OP("Abs").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("Neg").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("Exp").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("Tanh").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("Erf").Doc(kSameShape).Elementwise().Infer(SameShape);
SHOAL_REGISTER_OP("Sqrt").Doc(kSameShape).Elementwise().Infer(SameShape);

SHOAL_REGISTER_OP("Identity")
    .Doc(kSameShape)
    .Elementwise()
    .KeepsSparsity()
    .Infer(SameShape);
// Dropout is the identity at inference; `ratio` is kept for training.
SHOAL_REGISTER_OP("Dropout")
    .Doc(kSameShape)
    .Attr("ratio")
    .Attr("seed")
    .Elementwise()
    .Infer(SameShape);

Status InferSoftmax(const Node& node, const InputShapes& in,
                    std::vector<Shape>* out) {
  const int64_t r = static_cast<int64_t>(in[0].size());
  int64_t axis = node.attrs.GetInt("axis", -1);
  if (axis < -r || axis >= r) {
    return ShapeError(node, "axis " + std::to_string(axis) +
                                " is out of range for " + ShapeToString(in[0]));
  }
  (*out)[0] = in[0];
  return Status::Ok();
}

SHOAL_REGISTER_OP("Softmax")
    .Doc("any shape -> the same shape, normalised along `axis` (any axis)")
    .SplitOffReducedAxes([](const Node& n, int64_t rank) {
      const int64_t a = n.attrs.GetInt("axis", -1);
      return std::vector<int64_t>{a < 0 ? a + rank : a};
    })
    .Attr("axis")
    .Infer(InferSoftmax);

}  // namespace
}  // namespace shoal
