#include "onnx/onnx_importer.h"

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "onnx/convert_node.h"
#include "onnx/einsum.h"
#include "onnx/fold_constants.h"
#include "onnx/fuse_layer_norm.h"
#include "onnx/input_shapes.h"
#include "onnx/onnx_tensor.h"
#include "onnx/unsupported_ops.h"

namespace shoal {

// The importer's answers to node conversion, for one node.
class NodeEnv : public ConvertEnv {
 public:
  NodeEnv(OnnxImporter* imp, const onnx::NodeProto& n) : imp_(imp), n_(n) {}
  StatusOr<const ConstValue*> Constant(int i) override {
    if (i >= n_.input_size() || n_.input(i).empty()) return nullptr;
    return imp_->ConstantOf(imp_->Resolve(n_.input(i)));
  }
  std::optional<int32_t> ConstantType(int i) override {
    if (i >= n_.input_size() || n_.input(i).empty()) return std::nullopt;
    return imp_->ConstantTypeOf(imp_->Resolve(n_.input(i)));
  }
  const Shape* ShapeOf(int i) override {
    if (i >= n_.input_size() || n_.input(i).empty()) return nullptr;
    return imp_->ShapeOf(imp_->Resolve(n_.input(i)));
  }
  bool OutputUsed(int i) override {
    return i < n_.output_size() && imp_->read_.count(n_.output(i));
  }

 private:
  OnnxImporter* imp_;
  const onnx::NodeProto& n_;
};

std::string OnnxImporter::Resolve(const std::string& name) const {
  auto it = alias_.find(name);
  return it == alias_.end() ? name : it->second;
}

Status OnnxImporter::Run(Model* m) {
  m_ = m;
  const onnx::GraphProto& g = model_.graph();
  m_->graph.name = g.name().empty() ? "onnx_model" : g.name();
  RETURN_IF_ERROR(ReadOpset());
  RETURN_IF_ERROR(UnsupportedOpsError(FindUnsupportedOps(g)));
  for (const auto& n : g.node())
    for (const auto& in : n.input()) read_.insert(in);
  for (const auto& o : g.output()) read_.insert(o.name());
  RETURN_IF_ERROR(AddInitializers());
  RETURN_IF_ERROR(AddInputs());
  // LayerNorm written as its arithmetic is imported whole where its last
  // node is (onnx/fuse_layer_norm.h).
  const std::map<int, LayerNormChain> chains = FindLayerNormChains(g);
  std::set<int> in_chain;
  for (const auto& [last, c] : chains)
    for (int k : c.nodes)
      if (k != last) in_chain.insert(k);
  for (int i = 0; i < g.node_size(); ++i) {
    if (in_chain.count(i)) continue;
    auto chain = chains.find(i);
    if (chain != chains.end()) {
      RETURN_IF_ERROR(ImportLayerNormChain(chain->second));
    } else {
      RETURN_IF_ERROR(ImportAt(g.node(i), i));
    }
  }
  return AddOutputs();
}

Status OnnxImporter::ImportAt(const onnx::NodeProto& n, int i) {
  auto context = [&](const Status& s) {
    std::string name = n.name().empty() ? "#" + std::to_string(i) : n.name();
    return s.WithContext("node '" + name + "' (" + n.op_type() + ")");
  };
  // An Einsum is imported as the nodes that compute it (onnx/einsum.h).
  std::vector<onnx::NodeProto> parts;
  if (n.op_type() == "Einsum") {
    auto p = EinsumAsMatMul(n);
    if (!p.ok()) return context(p.status());
    parts = std::move(*p);
  }
  const int count = parts.empty() ? 1 : static_cast<int>(parts.size());
  for (int k = 0; k < count; ++k) {
    std::optional<Node> node;
    Status s = ImportNode(parts.empty() ? n : parts[k], i, &node);
    if (!s.ok()) return context(s);
    // Shape errors name the node themselves.
    if (node) RETURN_IF_ERROR(AddShoalNode(std::move(*node)));
  }
  return Status::Ok();
}

Status OnnxImporter::ImportLayerNormChain(const LayerNormChain& c) {
  const onnx::GraphProto& g = model_.graph();
  LayerNormFacts f;
  const Shape* x = ShapeOf(Resolve(c.x));
  f.rank = x ? static_cast<int64_t>(x->size()) : 0;
  // A scalar constant's value; nullopt for anything else.
  auto scalar = [&](const std::string& t) -> std::optional<double> {
    if (t.empty() || !known_.count(Resolve(t))) return std::nullopt;
    auto v = ConstantOf(Resolve(t));
    if (!v.ok() || *v == nullptr || (*v)->size() != 1) return std::nullopt;
    return (*v)->AsDouble(0);
  };
  auto axes = [&](const std::vector<int64_t>& attr, const std::string& in) {
    if (in.empty() || !known_.count(Resolve(in))) return attr;
    auto v = ConstantOf(Resolve(in));
    if (!v.ok() || *v == nullptr || (*v)->is_float) return attr;
    return (*v)->ints;
  };
  auto rank = [&](const std::string& t) -> std::optional<int64_t> {
    auto it = known_.find(Resolve(t));
    if (it == known_.end()) return std::nullopt;
    return static_cast<int64_t>(it->second.shape.size());
  };
  f.axes1 = axes(c.axes1, c.axes1_input);
  f.axes2 = axes(c.axes2, c.axes2_input);
  f.exponent = scalar(c.exponent);
  f.epsilon = scalar(c.epsilon);
  f.scale_rank = rank(c.scale);
  if (c.shift_node >= 0) f.shift_rank = rank(c.shift);
  std::optional<onnx::NodeProto> ln;
  if (x != nullptr && !known_.count(Resolve(c.x))) {
    ln = LayerNormFromChain(g, c, f, true);
    if (!ln) ln = LayerNormFromChain(g, c, f, false);
  }
  if (!ln) {  // not a LayerNorm after all: its nodes as they are
    for (int k : c.nodes) RETURN_IF_ERROR(ImportAt(g.node(k), k));
    return Status::Ok();
  }
  const int at = c.scale_node;
  RETURN_IF_ERROR(ImportAt(*ln, at));
  // A shift that is not a constant (a residual's sum) stays an Add.
  if (c.shift_node >= 0 && ln->output(0) != g.node(c.shift_node).output(0)) {
    RETURN_IF_ERROR(ImportAt(g.node(c.shift_node), c.shift_node));
  }
  return Status::Ok();
}

Status OnnxImporter::ReadOpset() {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  if (opset_ == 0) {
    return InvalidArgument("the model declares no opset for the ONNX domain");
  }
  if (opset_ < 7 || opset_ > 18) {
    return Unsupported("opset " + std::to_string(opset_) +
                       " (shoal reads opsets 7 to 18)");
  }
  return Status::Ok();
}

Status OnnxImporter::AddInitializers() {
  for (const auto& t : model_.graph().initializer()) {
    if (t.name().empty()) return InvalidArgument("an initializer has no name");
    Known k;
    k.proto = &t;
    ASSIGN_OR_RETURN(k.shape, TensorShape(t));
    if (!known_.emplace(t.name(), std::move(k)).second) {
      return InvalidArgument("initializer '" + t.name() + "' appears twice");
    }
  }
  return Status::Ok();
}

Status OnnxImporter::AddInputs() {
  bool first = true;
  for (const auto& vi : model_.graph().input()) {
    if (known_.count(vi.name())) continue;  // an initializer: a weight
    bool replaced_fixed = false;
    std::optional<Shape> override_shape;
    if (first) override_shape = opts_.input_shape;
    ASSIGN_OR_RETURN(Shape s,
                     ResolveInputShape(vi, override_shape, &replaced_fixed));
    if (replaced_fixed) declared_shapes_apply_ = false;
    RETURN_IF_ERROR(m_->graph.AddInput(vi.name(), s));
    first = false;
  }
  if (first) return InvalidArgument("the graph has no (non-initializer) input");
  return Status::Ok();
}

std::optional<int32_t> OnnxImporter::ConstantTypeOf(const std::string& name) {
  auto it = known_.find(name);
  if (it == known_.end()) return std::nullopt;
  const Known& k = it->second;
  if (k.value) return k.value->data_type;
  return k.proto ? k.proto->data_type() : 0;
}

StatusOr<const ConstValue*> OnnxImporter::ConstantOf(const std::string& name) {
  auto it = known_.find(name);
  if (it == known_.end()) return nullptr;
  Known& k = it->second;
  if (!k.value) {
    ASSIGN_OR_RETURN(ConstValue v, DecodeTensor(*k.proto, base_dir_));
    k.value = std::move(v);
  }
  return &*k.value;
}

const Shape* OnnxImporter::ShapeOf(const std::string& name) const {
  const TensorInfo* t = m_->graph.FindTensor(name);
  if (t && t->shaped) return &t->shape;
  auto it = known_.find(name);
  return it == known_.end() ? nullptr : &it->second.shape;
}

Status OnnxImporter::Materialize(const std::string& name) {
  if (m_->graph.FindTensor(name)) return Status::Ok();
  Known& k = known_.at(name);
  RETURN_IF_ERROR(m_->graph.AddWeight(name, k.shape));
  if (!opts_.load_weights) return Status::Ok();
  std::vector<float> data;
  if (k.value) {
    data = k.value->ToFloats();
  } else {
    ASSIGN_OR_RETURN(ConstValue v,
                     DecodeTensor(*k.proto, base_dir_, /*as_floats=*/true));
    data = std::move(v.floats);
  }
  m_->weights[name] = Tensor(k.shape, std::move(data));
  return Status::Ok();
}

Status OnnxImporter::ImportNode(const onnx::NodeProto& n, int index,
                                std::optional<Node>* out) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    return Unsupported("op '" + n.domain() + "::" + n.op_type() +
                       "' is not supported (custom domain)");
  }
  for (const auto& o : n.output()) {
    if (!o.empty() && (known_.count(o) || m_->graph.FindTensor(o))) {
      return InvalidArgument("output '" + o + "' is defined twice");
    }
  }
  // Identity of a constant is the constant (PyTorch shares weights so).
  if (n.op_type() == "Identity" && n.input_size() == 1 &&
      n.output_size() == 1 && known_.count(Resolve(n.input(0)))) {
    alias_[n.output(0)] = Resolve(n.input(0));
    return Status::Ok();
  }
  if (IsFoldableOp(n.op_type())) {
    bool all_known = true;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) continue;
      const std::string r = Resolve(n.input(i));
      all_known &= FoldNeedsValue(n.op_type(), i) ? known_.count(r) != 0
                                                  : ShapeOf(r) != nullptr;
    }
    if (all_known) return FoldInto(n);
  }
  Node node;
  node.name = NodeName(n, index);
  NodeEnv env(this, n);
  RETURN_IF_ERROR(ConvertNode(n, opset_, &env, &node));
  for (auto& in : node.inputs) {
    if (in.empty()) continue;
    in = Resolve(in);
    if (known_.count(in)) {
      RETURN_IF_ERROR(Materialize(in));
    } else if (!m_->graph.FindTensor(in)) {
      return InvalidArgument("reads tensor '" + in +
                             "' that no earlier node, input or initializer "
                             "defines");
    }
  }
  *out = std::move(node);
  return Status::Ok();
}

Status OnnxImporter::FoldInto(const onnx::NodeProto& n) {
  std::vector<FoldInput> in(n.input_size());
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) continue;
    const std::string r = Resolve(n.input(i));
    in[i].present = true;
    in[i].shape = ShapeOf(r);
    if (FoldNeedsValue(n.op_type(), i)) {
      ASSIGN_OR_RETURN(in[i].value, ConstantOf(r));
    }
  }
  ASSIGN_OR_RETURN(std::vector<ConstValue> out,
                   FoldNode(n, opset_, in, base_dir_));
  if (n.output_size() < 1) return InvalidArgument("node has no output");
  for (size_t i = 0; i < out.size() && static_cast<int>(i) < n.output_size();
       ++i) {
    Known k;
    k.shape = out[i].shape;
    k.value = std::move(out[i]);
    known_[n.output(static_cast<int>(i))] = std::move(k);
  }
  return Status::Ok();
}

Status OnnxImporter::AddShoalNode(Node n) {
  RETURN_IF_ERROR(m_->graph.AddNode(n));
  const OpSchema* op = OpRegistry::Global().Find(n.op);
  ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(m_->graph, n));
  std::vector<Shape> out;
  RETURN_IF_ERROR(op->InferShapes(n, in, &out));
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i].empty()) continue;
    TensorInfo* t = m_->graph.FindTensor(n.outputs[i]);
    t->shape = out[i];
    t->shaped = true;
  }
  return Status::Ok();
}

std::string OnnxImporter::NodeName(const onnx::NodeProto& n, int index) {
  std::string base = n.name();
  if (base.empty()) base = n.op_type() + "_" + std::to_string(index);
  std::string name = base;
  for (int k = 2; node_names_.count(name); ++k)
    name = base + "_" + std::to_string(k);
  node_names_.insert(name);
  return name;
}

Status OnnxImporter::AddOutputs() {
  for (const auto& o : model_.graph().output()) {
    const std::string r = Resolve(o.name());
    if (known_.count(r) && !m_->graph.FindTensor(r)) {
      return Unsupported("graph output '" + o.name() +
                         "' is a constant; shoal graphs compute their outputs");
    }
    if (!m_->graph.FindTensor(r)) {
      return InvalidArgument("graph output '" + o.name() +
                             "' is never computed");
    }
    m_->graph.outputs.push_back(r);
  }
  if (m_->graph.outputs.empty())
    return InvalidArgument("the graph has no outputs");
  return Status::Ok();
}

}  // namespace shoal
