#include "train/torch_graph.h"

#include <torch/nn/functional.h>

#include <cmath>
#include <limits>

#include "graph/op_registry.h"
#include "ops/window.h"
#include "train/torch_branches.h"

namespace shoal {

namespace F = torch::nn::functional;
using TensorList = std::vector<torch::Tensor>;
using Kernel = TorchKernel;

struct TorchGraph::Step {
  const Node* node;
  std::vector<int> in, out;  // value slots; -1: absent optional input
  Kernel kernel;
};

namespace {

std::string NodeLabel(const Node& n) { return n.op + " node '" + n.name + "'"; }

Shape ShapeOf(const Graph& g, const std::string& t) {
  const TensorInfo* i = g.FindTensor(t);
  return i ? i->shape : Shape{};
}

int64_t NormAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// torch's F::pad order: last axis first, (begin, end) per axis.
std::vector<int64_t> TorchPads(const std::vector<int64_t>& begin,
                               const std::vector<int64_t>& end) {
  std::vector<int64_t> p;
  for (size_t i = begin.size(); i-- > 0;) {
    p.push_back(begin[i]);
    p.push_back(end[i]);
  }
  return p;
}

bool Symmetric(const WindowGeometry& w) { return w.pad_begin == w.pad_end; }

StatusOr<WindowGeometry> Window(const Graph& g, const Node& n,
                                std::vector<int64_t> kernel) {
  const Shape x = ShapeOf(g, n.inputs[0]);
  if (x.size() < 3 || x.size() > 5)
    return Unsupported(NodeLabel(n) + ": input " + ShapeToString(x) +
                       " is not 1-D to 3-D spatial");
  return ResolveWindow(n, std::vector<int64_t>(x.begin() + 2, x.end()),
                       std::move(kernel));
}

StatusOr<Kernel> ConvKernel(const Graph& g, const Node& n) {
  const Shape w = ShapeOf(g, n.inputs[1]);
  ASSIGN_OR_RETURN(WindowGeometry geo,
                   Window(g, n, std::vector<int64_t>(w.begin() + 2, w.end())));
  const int64_t groups = n.attrs.GetInt("group", 1);
  const bool sym = Symmetric(geo);
  return Kernel([geo, groups, sym](const TensorList& in, bool) -> TensorList {
    torch::Tensor x = in[0];
    std::vector<int64_t> pad = geo.pad_begin;
    if (!sym) {
      x = F::pad(x, F::PadFuncOptions(TorchPads(geo.pad_begin, geo.pad_end)));
      pad.assign(pad.size(), 0);
    }
    const torch::Tensor bias = in.size() > 2 ? in[2] : torch::Tensor();
    return {at::convolution(x, in[1], bias, geo.stride, pad, geo.dilation,
                            false, std::vector<int64_t>(pad.size(), 0),
                            groups)};
  });
}

StatusOr<Kernel> GemmKernel(const Graph&, const Node& n) {
  const bool ta = n.attrs.GetInt("transA", 0) != 0;
  const bool tb = n.attrs.GetInt("transB", 0) != 0;
  const float alpha = n.attrs.GetFloat("alpha", 1.f);
  const float beta = n.attrs.GetFloat("beta", 1.f);
  return Kernel([=](const TensorList& in, bool) -> TensorList {
    const bool has_c = in.size() > 2 && in[2].defined();
    if (!ta && tb && alpha == 1.f && beta == 1.f)
      return {torch::linear(in[0], in[1], has_c ? in[2] : torch::Tensor())};
    torch::Tensor y =
        torch::matmul(ta ? in[0].t() : in[0], tb ? in[1].t() : in[1]);
    if (alpha != 1.f) y = y * alpha;
    if (has_c) y = y + (beta == 1.f ? in[2] : in[2] * beta);
    return {y};
  });
}

StatusOr<Kernel> MaxPoolKernel(const Graph& g, const Node& n) {
  ASSIGN_OR_RETURN(WindowGeometry geo, Window(g, n, {}));
  const bool sym = Symmetric(geo);
  return Kernel([geo, sym](const TensorList& in, bool) -> TensorList {
    torch::Tensor x = in[0];
    std::vector<int64_t> pad = geo.pad_begin;
    if (!sym) {
      x = F::pad(x, F::PadFuncOptions(TorchPads(geo.pad_begin, geo.pad_end))
                        .value(-std::numeric_limits<float>::infinity()));
      pad.assign(pad.size(), 0);
    }
    switch (geo.kernel.size()) {
      case 1:
        return {torch::max_pool1d(x, geo.kernel, geo.stride, pad, geo.dilation,
                                  geo.ceil_mode)};
      case 2:
        return {torch::max_pool2d(x, geo.kernel, geo.stride, pad, geo.dilation,
                                  geo.ceil_mode)};
      default:
        return {torch::max_pool3d(x, geo.kernel, geo.stride, pad, geo.dilation,
                                  geo.ceil_mode)};
    }
  });
}

StatusOr<Kernel> AvgPoolKernel(const Graph& g, const Node& n) {
  ASSIGN_OR_RETURN(WindowGeometry geo, Window(g, n, {}));
  if (!Symmetric(geo))
    return Unsupported(NodeLabel(n) + ": asymmetric padding of an AveragePool");
  const bool include = n.attrs.GetInt("count_include_pad", 0) != 0;
  return Kernel([geo, include](const TensorList& in, bool) -> TensorList {
    const auto& p = geo.pad_begin;
    switch (geo.kernel.size()) {
      case 1:
        return {torch::avg_pool1d(in[0], geo.kernel, geo.stride, p,
                                  geo.ceil_mode, include)};
      case 2:
        return {torch::avg_pool2d(in[0], geo.kernel, geo.stride, p,
                                  geo.ceil_mode, include)};
      default:
        return {torch::avg_pool3d(in[0], geo.kernel, geo.stride, p,
                                  geo.ceil_mode, include)};
    }
  });
}

std::vector<int64_t> SpatialDims(int64_t rank) {
  std::vector<int64_t> d;
  for (int64_t i = 2; i < rank; ++i) d.push_back(i);
  return d;
}

StatusOr<Kernel> BatchNormKernel(const Graph&, const Node& n) {
  const double eps = n.attrs.GetFloat("epsilon", 1e-5f);
  // ONNX's momentum weighs the old statistic (0.9), torch's the new (0.1).
  const double momentum = 1.0 - n.attrs.GetFloat("momentum", 0.9f);
  return Kernel(
      [eps, momentum](const TensorList& in, bool training) -> TensorList {
        return {torch::batch_norm(in[0], in[1], in[2], in[3], in[4], training,
                                  momentum, eps, false)};
      });
}

// ONNX LRN: x / (bias + alpha / size * sum of squares over `size` channels,
// floor((size-1)/2) before and ceil((size-1)/2) after) ^ beta.
StatusOr<Kernel> LrnKernel(const Graph& g, const Node& n) {
  const int64_t size = n.attrs.GetInt("size", 0);
  if (size < 1) return Unsupported(NodeLabel(n) + ": LRN size must be >= 1");
  if (ShapeOf(g, n.inputs[0]).size() != 4)
    return Unsupported(NodeLabel(n) + ": LRN of a non-4-D input");
  const double alpha = n.attrs.GetFloat("alpha", 1e-4f);
  const double beta = n.attrs.GetFloat("beta", 0.75f);
  const double bias = n.attrs.GetFloat("bias", 1.f);
  return Kernel([=](const TensorList& in, bool) -> TensorList {
    torch::Tensor sq = in[0].pow(2).unsqueeze(1);  // N,1,C,H,W
    sq = F::pad(sq, F::PadFuncOptions({0, 0, 0, 0, (size - 1) / 2, size / 2}));
    torch::Tensor sum =
        torch::avg_pool3d(sq, {size, 1, 1}, {1, 1, 1}).squeeze(1) * size;
    return {in[0] / (sum * (alpha / size) + bias).pow(beta)};
  });
}

// The graph's shape with axis 0 (the batch, 1 in the graph) left to torch.
StatusOr<Kernel> ReshapeKernel(const Graph& g, const Node& n) {
  Shape target = ShapeOf(g, n.outputs[0]);
  const Shape x = ShapeOf(g, n.inputs[0]);
  if (target.empty() || x.empty() || target[0] != x[0])
    return Unsupported(NodeLabel(n) + ": reshapes " + ShapeToString(x) +
                       " to " + ShapeToString(target) +
                       ", mixing the batch axis with others");
  target[0] = -1;
  return Kernel([target](const TensorList& in, bool) -> TensorList {
    return {in[0].reshape(target)};
  });
}

StatusOr<Kernel> SliceKernel(const Graph& g, const Node& n) {
  const int64_t rank = static_cast<int64_t>(ShapeOf(g, n.inputs[0]).size());
  const auto starts = n.attrs.GetInts("starts");
  const auto ends = n.attrs.GetInts("ends");
  auto axes = n.attrs.GetInts("axes");
  auto steps = n.attrs.GetInts("steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  if (steps.empty()) steps.assign(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    axes[i] = NormAxis(axes[i], rank);
    if (steps[i] < 1)
      return Unsupported(NodeLabel(n) + ": Slice with a step below 1");
    if (axes[i] == 0)
      return Unsupported(NodeLabel(n) + ": Slice of the batch axis");
  }
  return Kernel([=](const TensorList& in, bool) -> TensorList {
    torch::Tensor x = in[0];
    for (size_t i = 0; i < axes.size(); ++i)
      x = x.slice(axes[i], starts[i], ends[i], steps[i]);
    return {x};
  });
}

StatusOr<Kernel> PadKernel(const Graph& g, const Node& n) {
  const auto pads = n.attrs.GetInts("pads");
  const size_t rank = ShapeOf(g, n.inputs[0]).size();
  if (pads.size() != 2 * rank)
    return Unsupported(NodeLabel(n) + ": pads of the wrong length");
  if (pads[0] != 0 || pads[rank] != 0)
    return Unsupported(NodeLabel(n) + ": padding the batch axis");
  const std::string mode = n.attrs.GetString("mode", "constant");
  const double value = n.attrs.GetFloat("value", 0.f);
  std::vector<int64_t> p =
      TorchPads(std::vector<int64_t>(pads.begin(), pads.begin() + rank),
                std::vector<int64_t>(pads.begin() + rank, pads.end()));
  // torch pads only trailing axes in non-constant modes: drop leading zeros.
  while (p.size() > 2 && p[p.size() - 1] == 0 && p[p.size() - 2] == 0)
    p.resize(p.size() - 2);
  F::PadFuncOptions o(p);
  if (mode == "constant") {
    o.value(value);
  } else if (mode == "reflect") {
    o.mode(torch::kReflect);
  } else if (mode == "edge") {
    o.mode(torch::kReplicate);
  } else {
    return Unsupported(NodeLabel(n) + ": Pad mode '" + mode + "'");
  }
  return Kernel([o](const TensorList& in, bool) -> TensorList {
    return {F::pad(in[0], o)};
  });
}

StatusOr<Kernel> SplitKernel(const Graph& g, const Node& n) {
  const int64_t axis =
      NormAxis(n.attrs.GetInt("axis", 0), ShapeOf(g, n.inputs[0]).size());
  if (axis == 0) return Unsupported(NodeLabel(n) + ": Split of the batch axis");
  std::vector<int64_t> sizes;
  for (const auto& o : n.outputs) sizes.push_back(ShapeOf(g, o)[axis]);
  return Kernel([axis, sizes](const TensorList& in, bool) -> TensorList {
    return torch::split_with_sizes(in[0], sizes, axis);
  });
}

using Builder = std::function<StatusOr<Kernel>(const Graph&, const Node&)>;

// A kernel needing nothing from the graph.
Builder Simple(
    std::function<TensorList(const Node&, const TensorList&, bool)> f) {
  return [f](const Graph&, const Node& n) -> StatusOr<Kernel> {
    return Kernel([f, n](const TensorList& in, bool training) {
      return f(n, in, training);
    });
  };
}

// Every op the interpreter runs; first match wins, absent means unsupported.
const std::map<std::string, Builder>& Builders() {
  static const auto* m = new std::map<std::string, Builder>{
      {"Conv", ConvKernel},
      {"Gemm", GemmKernel},
      {"MatMul", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{torch::matmul(in[0], in[1])};
       })},
      {"MaxPool", MaxPoolKernel},
      {"AveragePool", AvgPoolKernel},
      {"GlobalAveragePool", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0].mean(SpatialDims(in[0].dim()), true)};
       })},
      {"GlobalMaxPool", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0].amax(SpatialDims(in[0].dim()), true)};
       })},
      {"BatchNormalization", BatchNormKernel},
      {"LRN", LrnKernel},
      {"Relu", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{torch::relu(in[0])};
       })},
      {"LeakyRelu", Simple([](const Node& n, const TensorList& in, bool) {
         return TensorList{
             torch::leaky_relu(in[0], n.attrs.GetFloat("alpha", 0.01f))};
       })},
      {"Sigmoid", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{torch::sigmoid(in[0])};
       })},
      {"HardSwish", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{torch::hardswish(in[0])};
       })},
      {"Clip", Simple([](const Node& n, const TensorList& in, bool) {
         const float inf = std::numeric_limits<float>::infinity();
         return TensorList{torch::clamp(in[0], n.attrs.GetFloat("min", -inf),
                                        n.attrs.GetFloat("max", inf))};
       })},
      {"Identity", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0]};
       })},
      {"Dropout", Simple([](const Node& n, const TensorList& in, bool train) {
         return TensorList{
             torch::dropout(in[0], n.attrs.GetFloat("ratio", 0.5f), train)};
       })},
      {"Softmax", Simple([](const Node& n, const TensorList& in, bool) {
         return TensorList{torch::softmax(in[0], n.attrs.GetInt("axis", -1))};
       })},
      {"Flatten", Simple([](const Node& n, const TensorList& in, bool) {
         const int64_t axis = NormAxis(n.attrs.GetInt("axis", 1), in[0].dim());
         int64_t outer = 1;
         for (int64_t i = 0; i < axis; ++i) outer *= in[0].size(i);
         return TensorList{in[0].reshape({outer, -1})};
       })},
      {"Reshape", ReshapeKernel},
      {"Transpose", Simple([](const Node& n, const TensorList& in, bool) {
         return TensorList{in[0].permute(n.attrs.GetInts("perm"))};
       })},
      {"Concat", Simple([](const Node& n, const TensorList& in, bool) {
         return TensorList{torch::cat(in, n.attrs.GetInt("axis", 1))};
       })},
      {"Add", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0] + in[1]};
       })},
      {"Sub", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0] - in[1]};
       })},
      {"Mul", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0] * in[1]};
       })},
      {"Div", Simple([](const Node&, const TensorList& in, bool) {
         return TensorList{in[0] / in[1]};
       })},
      {"ReduceMean", Simple([](const Node& n, const TensorList& in, bool) {
         auto axes = n.attrs.GetInts("axes");
         if (axes.empty())
           for (int64_t i = 1; i < in[0].dim(); ++i) axes.push_back(i);
         return TensorList{
             in[0].mean(axes, n.attrs.GetInt("keepdims", 1) != 0)};
       })},
      {"ReduceL2", Simple([](const Node& n, const TensorList& in, bool) {
         auto axes = n.attrs.GetInts("axes");
         if (axes.empty())
           for (int64_t i = 1; i < in[0].dim(); ++i) axes.push_back(i);
         return TensorList{(in[0] * in[0])
                               .sum(axes, n.attrs.GetInt("keepdims", 1) != 0)
                               .sqrt()};
       })},
      {"SpaceToDepth", Simple([](const Node& n, const TensorList& in, bool) {
         const int64_t b = n.attrs.GetInt("blocksize", 1);
         const auto& x = in[0];
         const int64_t N = x.size(0), C = x.size(1), H = x.size(2),
                       W = x.size(3);
         return TensorList{x.reshape({N, C, H / b, b, W / b, b})
                               .permute({0, 3, 5, 1, 2, 4})
                               .reshape({N, C * b * b, H / b, W / b})};
       })},
      {"Slice", SliceKernel},
      {"Pad", PadKernel},
      {"Split", SplitKernel},
  };
  return *m;
}

// Weights conv / fc / matmul multiply by: what L2 weight decay applies to.
bool IsDecayed(const Node& n, size_t input) {
  return input == 1 && (n.op == "Conv" || n.op == "Gemm" || n.op == "MatMul");
}

}  // namespace

StatusOr<TorchKernel> BuildTorchKernel(const Graph& g, const Node& n) {
  auto it = Builders().find(n.op);
  if (it == Builders().end())
    return Unsupported("training cannot run " + NodeLabel(n) + ": op '" + n.op +
                       "' is not implemented in the libtorch interpreter");
  return it->second(g, n);
}

torch::Tensor ToTorch(const Tensor& t) {
  return torch::from_blob(const_cast<float*>(t.data.data()), t.shape,
                          torch::kFloat32)
      .clone();
}

Tensor FromTorch(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
  Tensor out(Shape(c.sizes().begin(), c.sizes().end()));
  std::memcpy(out.data.data(), c.data_ptr<float>(),
              out.data.size() * sizeof(float));
  return out;
}

TorchGraph::TorchGraph() = default;
TorchGraph::~TorchGraph() = default;

StatusOr<std::unique_ptr<TorchGraph>> TorchGraph::Create(
    const Graph& g, const WeightStore& weights, bool batch_branches) {
  RETURN_IF_ERROR(CheckWeights(g, weights));
  std::unique_ptr<TorchGraph> tg(new TorchGraph());
  tg->g_ = g;
  const Graph& graph = tg->g_;
  for (const auto& node : graph.nodes) {
    const OpSchema* schema = OpRegistry::Global().Find(node.op);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      const TensorInfo* t = in.empty() ? nullptr : graph.FindTensor(in);
      if (!t || !t->is_weight() || tg->weights_.count(in)) continue;
      const bool learned = !schema || schema->IsParamInput(static_cast<int>(i));
      tg->weights_[in] = ToTorch(weights.at(in)).requires_grad_(learned);
      if (learned)
        (IsDecayed(node, i) ? tg->decayed_ : tg->other_).push_back(in);
    }
  }
  if (batch_branches) {
    auto b = BatchedBranches::Create(graph);
    if (b.ok()) {
      tg->batched_ = std::move(*b);
    } else {
      tg->why_not_batched_ = b.status().message();
    }
  }
  auto slot = [&](const std::string& name) {
    auto [it, fresh] =
        tg->slot_.emplace(name, static_cast<int>(tg->slot_.size()));
    return it->second;
  };
  for (const auto& in : graph.inputs) slot(in);
  for (const auto& node : graph.nodes) {
    // Built even for batched nodes: every op is checked the same way.
    ASSIGN_OR_RETURN(Kernel k, BuildTorchKernel(graph, node));
    if (tg->batched_ && tg->batched_->nodes().count(node.name)) continue;
    auto step = std::make_unique<Step>();
    step->node = &node;
    step->kernel = std::move(k);
    for (const auto& in : node.inputs)
      step->in.push_back(in.empty() ? -1 : slot(in));
    for (const auto& out : node.outputs) step->out.push_back(slot(out));
    tg->steps_.push_back(std::move(step));
  }
  for (const auto& out : graph.outputs) slot(out);
  return tg;
}

StatusOr<std::vector<torch::Tensor>> TorchGraph::Forward(
    const std::vector<torch::Tensor>& inputs,
    const std::vector<std::string>& wanted) {
  if (inputs.size() != g_.inputs.size())
    return InvalidArgument("the graph takes " +
                           std::to_string(g_.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  std::vector<torch::Tensor> values(slot_.size());
  for (size_t i = 0; i < inputs.size(); ++i) values[i] = inputs[i];
  for (const auto& [name, w] : weights_) {
    auto it = slot_.find(name);
    if (it != slot_.end()) values[it->second] = w;
  }
  if (batched_) {
    std::map<std::string, torch::Tensor> in, out;
    for (size_t i = 0; i < inputs.size(); ++i) in[g_.inputs[i]] = inputs[i];
    RETURN_IF_ERROR(batched_->Run(in, weights_, training_, &out));
    for (const auto& [name, t] : out) {
      auto it = slot_.find(name);
      if (it != slot_.end()) values[it->second] = t;
    }
  }
  for (const auto& step : steps_) {
    const Node& n = *step->node;
    TensorList in;
    for (int s : step->in) in.push_back(s < 0 ? torch::Tensor() : values[s]);
    TensorList out;
    try {
      out = step->kernel(in, training_);
    } catch (const std::exception& e) {
      return Internal("libtorch failed on " + NodeLabel(n) + ": " + e.what());
    }
    if (out.size() != step->out.size())
      return Internal(NodeLabel(n) + " produced " + std::to_string(out.size()) +
                      " outputs, the graph has " +
                      std::to_string(step->out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      // The interpreter must agree with shoal's shape inference on every
      // axis but the batch.
      const Shape want = ShapeOf(g_, n.outputs[i]);
      const auto got = out[i].sizes();
      bool same = static_cast<size_t>(got.size()) == want.size();
      for (size_t d = 1; same && d < want.size(); ++d) same = got[d] == want[d];
      if (!same)
        return Internal(NodeLabel(n) + " gave shape " +
                        ShapeToString(Shape(got.begin(), got.end())) +
                        " in libtorch, shoal infers " + ShapeToString(want));
      values[step->out[i]] = out[i];
    }
  }
  const auto& names = wanted.empty() ? g_.outputs : wanted;
  std::vector<torch::Tensor> result;
  for (const auto& name : names) {
    auto it = slot_.find(name);
    if (it == slot_.end() || !values[it->second].defined())
      return NotFound("no tensor '" + name + "' in the graph");
    result.push_back(values[it->second]);
  }
  return result;
}

std::vector<torch::Tensor> TorchGraph::DecayedParameters() const {
  std::vector<torch::Tensor> p;
  for (const auto& n : decayed_) p.push_back(weights_.at(n));
  return p;
}

std::vector<torch::Tensor> TorchGraph::OtherParameters() const {
  std::vector<torch::Tensor> p;
  for (const auto& n : other_) p.push_back(weights_.at(n));
  return p;
}

WeightStore TorchGraph::ExportWeights() const {
  WeightStore w;
  for (const auto& [name, t] : weights_) w[name] = FromTorch(t);
  return w;
}

}  // namespace shoal
