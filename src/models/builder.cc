#include "models/builder.h"

#include "graph/op_registry.h"
#include "graph/shape_check.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"

namespace shoal {

GraphBuilder::GraphBuilder(std::string model_name) {
  g_.name = std::move(model_name);
}

std::string GraphBuilder::Fresh(const std::string& op) {
  std::string base = op;
  for (auto& c : base) c = static_cast<char>(std::tolower(c));
  return base + "_" + std::to_string(++counter_);
}

std::vector<int64_t> GraphBuilder::Expand(std::vector<int64_t> v,
                                          size_t rank) const {
  if (v.size() == 1 && rank > 1) v.assign(rank, v[0]);
  return v;
}

std::vector<int64_t> GraphBuilder::OnnxPads(const std::vector<int64_t>& pad,
                                            size_t rank) const {
  if (pad.size() == 2 * rank) return pad;  // already [begins..., ends...]
  std::vector<int64_t> begin = Expand(pad, rank), pads = begin;
  pads.insert(pads.end(), begin.begin(), begin.end());
  return pads;
}

std::string GraphBuilder::Input(const std::string& name, const Shape& shape) {
  if (error_.ok()) error_ = g_.AddInput(name, shape);
  return name;
}

std::string GraphBuilder::AddWeight(const std::string& name,
                                    const Shape& shape) {
  if (error_.ok()) error_ = g_.AddWeight(name, shape);
  return name;
}

const Shape& GraphBuilder::ShapeOf(const std::string& tensor) const {
  // After an error (an input shape too large or too small for the model)
  // later layers are not added, and the model code goes on reading shapes
  // of tensors that do not exist: ones of the largest rank, so that its
  // indexing and divisions stay defined until Finish reports the error.
  // An empty shape here was indexed past its end (a segfault).
  static const Shape kUnknown(kMaxTensorRank, 1);
  const TensorInfo* t = g_.FindTensor(tensor);
  return t ? t->shape : kUnknown;
}

std::string GraphBuilder::Op(const std::string& op,
                             const std::vector<std::string>& inputs,
                             Attrs attrs, const std::string& name) {
  std::string node_name = name.empty() ? Fresh(op) : name;
  std::string out = node_name;
  if (!error_.ok()) return out;
  if (g_.FindTensor(out)) out = node_name + ":out";
  Node n{node_name, op, inputs, {out}, std::move(attrs)};
  error_ = g_.AddNode(n);
  if (!error_.ok()) return out;
  // Shape the new node now so later layers can size their weights.
  std::vector<Shape> shapes;
  error_ = InferNodeShapes(g_, n, &shapes);
  if (!error_.ok()) return out;
  TensorInfo* t = g_.FindTensor(out);
  t->shape = shapes[0];
  t->shaped = true;
  return out;
}

std::string GraphBuilder::Conv(const std::string& name, const std::string& x,
                               int64_t out_channels,
                               std::vector<int64_t> kernel, const ConvOpts& o) {
  const Shape& xs = ShapeOf(x);
  const size_t r = xs.size() >= 3 ? xs.size() - 2 : 1;
  kernel = Expand(kernel, r);
  Shape w = {out_channels, xs.size() > 1 ? xs[1] / o.group : 1};
  w.insert(w.end(), kernel.begin(), kernel.end());
  std::vector<std::string> inputs = {x, AddWeight(name + ".weight", w)};
  if (o.bias) inputs.push_back(AddWeight(name + ".bias", {out_channels}));
  Attrs a;
  a.Set("kernel_shape", kernel);
  a.Set("strides", Expand(o.stride, r));
  a.Set("pads", OnnxPads(o.pad, r));
  a.Set("dilations", Expand(o.dilation, r));
  a.Set("group", o.group);
  return Op("Conv", inputs, a, name);
}

std::string GraphBuilder::Conv(const std::string& name, const std::string& x,
                               int64_t out_channels, int64_t kernel,
                               int64_t stride, int64_t pad, int64_t group,
                               bool bias) {
  ConvOpts o;
  o.stride = {stride};
  o.pad = {pad};
  o.group = group;
  o.bias = bias;
  return Conv(name, x, out_channels, std::vector<int64_t>{kernel}, o);
}

std::string GraphBuilder::BatchNorm(const std::string& name,
                                    const std::string& x, float epsilon) {
  const Shape& xs = ShapeOf(x);
  const int64_t c = xs.size() > 1 ? xs[1] : 1;
  Attrs a;
  a.Set("epsilon", epsilon);
  return Op(
      "BatchNormalization",
      {x, AddWeight(name + ".weight", {c}), AddWeight(name + ".bias", {c}),
       AddWeight(name + ".running_mean", {c}),
       AddWeight(name + ".running_var", {c})},
      a, name);
}

std::string GraphBuilder::Linear(const std::string& name, const std::string& x,
                                 int64_t out_features, bool bias) {
  const Shape& xs = ShapeOf(x);
  const int64_t in_features = xs.empty() ? 1 : xs.back();
  // Stored [out, in] with transB=1, as PyTorch exports nn.Linear.
  std::vector<std::string> inputs = {
      x, AddWeight(name + ".weight", {out_features, in_features})};
  if (bias) inputs.push_back(AddWeight(name + ".bias", {out_features}));
  Attrs a;
  a.Set("transB", int64_t{1});
  return Op("Gemm", inputs, a, name);
}

std::string GraphBuilder::Relu(const std::string& x) { return Op("Relu", {x}); }
std::string GraphBuilder::Sigmoid(const std::string& x) {
  return Op("Sigmoid", {x});
}
std::string GraphBuilder::HardSwish(const std::string& x) {
  return Op("HardSwish", {x});
}

std::string GraphBuilder::LeakyRelu(const std::string& x, float alpha) {
  Attrs a;
  a.Set("alpha", alpha);
  return Op("LeakyRelu", {x}, a);
}

std::string GraphBuilder::Clip(const std::string& x, float lo, float hi) {
  Attrs a;
  a.Set("min", lo);
  a.Set("max", hi);
  return Op("Clip", {x}, a);
}

std::string GraphBuilder::Softmax(const std::string& x, int64_t axis) {
  Attrs a;
  a.Set("axis", axis);
  return Op("Softmax", {x}, a);
}

std::string GraphBuilder::Dropout(const std::string& x, float ratio) {
  Attrs a;
  a.Set("ratio", ratio);
  return Op("Dropout", {x}, a);
}

std::string GraphBuilder::MaxPool(const std::string& x,
                                  std::vector<int64_t> kernel,
                                  std::vector<int64_t> stride,
                                  std::vector<int64_t> pad, bool ceil_mode,
                                  const std::string& name) {
  const size_t r = ShapeOf(x).size() >= 3 ? ShapeOf(x).size() - 2 : 1;
  Attrs a;
  a.Set("kernel_shape", Expand(kernel, r));
  a.Set("strides", Expand(stride, r));
  a.Set("pads", OnnxPads(pad, r));
  if (ceil_mode) a.Set("ceil_mode", int64_t{1});
  return Op("MaxPool", {x}, a, name);
}

std::string GraphBuilder::AvgPool(const std::string& x,
                                  std::vector<int64_t> kernel,
                                  std::vector<int64_t> stride,
                                  std::vector<int64_t> pad,
                                  bool count_include_pad) {
  const size_t r = ShapeOf(x).size() >= 3 ? ShapeOf(x).size() - 2 : 1;
  Attrs a;
  a.Set("kernel_shape", Expand(kernel, r));
  a.Set("strides", Expand(stride, r));
  a.Set("pads", OnnxPads(pad, r));
  a.Set("count_include_pad", int64_t{count_include_pad ? 1 : 0});
  return Op("AveragePool", {x}, a);
}

std::string GraphBuilder::GlobalAvgPool(const std::string& x) {
  return Op("GlobalAveragePool", {x});
}

std::string GraphBuilder::Lrn(const std::string& x, int64_t size, float alpha,
                              float beta, float bias, const std::string& name) {
  Attrs a;
  a.Set("size", size);
  a.Set("alpha", alpha);
  a.Set("beta", beta);
  a.Set("bias", bias);
  return Op("LRN", {x}, a, name);
}

std::string GraphBuilder::Add(const std::string& a, const std::string& b) {
  return Op("Add", {a, b});
}
std::string GraphBuilder::Mul(const std::string& a, const std::string& b) {
  return Op("Mul", {a, b});
}

std::string GraphBuilder::Concat(const std::vector<std::string>& xs,
                                 int64_t axis) {
  Attrs a;
  a.Set("axis", axis);
  return Op("Concat", xs, a);
}

std::string GraphBuilder::Flatten(const std::string& x, int64_t axis) {
  Attrs a;
  a.Set("axis", axis);
  return Op("Flatten", {x}, a);
}

std::string GraphBuilder::SpaceToDepth(const std::string& x,
                                       int64_t blocksize) {
  Attrs a;
  a.Set("blocksize", blocksize);
  return Op("SpaceToDepth", {x}, a);
}

StatusOr<Graph> GraphBuilder::Finish(const std::vector<std::string>& outputs) {
  if (!error_.ok())
    return error_.WithContext("building model '" + g_.name + "'");
  g_.outputs = outputs;
  RETURN_IF_ERROR(VerifyGraph(g_));
  return g_;
}

}  // namespace shoal
