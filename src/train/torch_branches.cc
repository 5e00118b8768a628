#include "train/torch_branches.h"

#include <torch/nn/functional.h>

#include "graph/op_registry.h"
#include "ops/window.h"
#include "train/torch_graph.h"

namespace shoal {

namespace F = torch::nn::functional;
using TensorList = std::vector<torch::Tensor>;

namespace {

enum class Kind { kAbsent, kBranch, kShared, kWeight };

struct Arg {
  Kind kind = Kind::kAbsent;
  torch::Tensor x;  // kBranch: batched; kShared: the graph input
  TensorList w;     // kWeight: one per branch
};

using BatchedKernel =
    std::function<torch::Tensor(const std::vector<Arg>&, bool training)>;

std::string Label(const Node& n) { return n.op + " node '" + n.name + "'"; }

// "b3/conv1" -> 3 and "conv1"; -1 for a name outside the branches.
int64_t ParseBranch(const std::string& name, std::string* rest) {
  if (name.size() < 3 || name[0] != 'b') return -1;
  size_t i = 1;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
    ++i;
  if (i == 1 || i >= name.size() || name[i] != '/') return -1;
  *rest = name.substr(i + 1);
  return std::stoll(name.substr(1, i - 1));
}

std::string InBranch(int64_t k, const std::string& rest) {
  return "b" + std::to_string(k) + "/" + rest;
}

StatusOr<BatchedKernel> ConvKernel(const Graph& g, const Node& n, int64_t k,
                                   Kind input) {
  const Shape x = g.FindTensor(n.inputs[0])->shape;
  const Shape w = g.FindTensor(n.inputs[1])->shape;
  ASSIGN_OR_RETURN(
      WindowGeometry geo,
      ResolveWindow(n, std::vector<int64_t>(x.begin() + 2, x.end()),
                    std::vector<int64_t>(w.begin() + 2, w.end())));
  const int64_t group = n.attrs.GetInt("group", 1);
  if (input == Kind::kShared && group != 1)
    return Unsupported(Label(n) + " is grouped and reads the model input");
  // A shared input feeds every branch's filters: one conv, filters stacked.
  // A batched input holds branch k's channels in its k-th block: K times the
  // groups keeps each branch's filters on its own channels.
  const int64_t groups = input == Kind::kShared ? 1 : k * group;
  const bool sym = geo.pad_begin == geo.pad_end;
  return BatchedKernel([geo, groups, sym](const std::vector<Arg>& in, bool) {
    torch::Tensor x = in[0].x;
    std::vector<int64_t> pad = geo.pad_begin;
    if (!sym) {
      std::vector<int64_t> p;
      for (size_t i = pad.size(); i-- > 0;) {
        p.push_back(geo.pad_begin[i]);
        p.push_back(geo.pad_end[i]);
      }
      x = F::pad(x, F::PadFuncOptions(p));
      pad.assign(pad.size(), 0);
    }
    const torch::Tensor bias = in.size() > 2 && in[2].kind == Kind::kWeight
                                   ? torch::cat(in[2].w)
                                   : torch::Tensor();
    return at::convolution(x, torch::cat(in[1].w), bias, geo.stride, pad,
                           geo.dilation, false,
                           std::vector<int64_t>(pad.size(), 0), groups);
  });
}

StatusOr<BatchedKernel> GemmKernel(const Node& n, int64_t k, Kind input) {
  if (n.attrs.GetInt("transA", 0) != 0 || n.attrs.GetFloat("alpha", 1) != 1 ||
      n.attrs.GetFloat("beta", 1) != 1)
    return Unsupported(Label(n) + " has transA, alpha or beta");
  const bool tb = n.attrs.GetInt("transB", 0) != 0;
  const bool shared = input == Kind::kShared;
  return BatchedKernel([tb, shared, k](const std::vector<Arg>& in, bool) {
    TensorList ws;  // [out, in] each
    for (const auto& w : in[1].w) ws.push_back(tb ? w : w.t());
    const bool bias = in.size() > 2 && in[2].kind == Kind::kWeight;
    if (shared)
      return torch::linear(in[0].x, torch::cat(ws),
                           bias ? torch::cat(in[2].w) : torch::Tensor());
    // [N, K*in] -> [K, N, in] x [K, in, out] -> [N, K*out].
    const torch::Tensor& x = in[0].x;
    const int64_t n_rows = x.size(0);
    torch::Tensor y = torch::bmm(x.reshape({n_rows, k, -1}).transpose(0, 1),
                                 torch::stack(ws).transpose(1, 2))
                          .transpose(0, 1)
                          .reshape({n_rows, -1});
    return bias ? y + torch::cat(in[2].w) : y;
  });
}

BatchedKernel BatchNormKernel(const Node& n, int64_t c) {
  const double eps = n.attrs.GetFloat("epsilon", 1e-5f);
  const double momentum = 1.0 - n.attrs.GetFloat("momentum", 0.9f);
  return [eps, momentum, c](const std::vector<Arg>& in, bool training) {
    torch::Tensor mean = torch::cat(in[3].w), var = torch::cat(in[4].w);
    torch::Tensor y =
        torch::batch_norm(in[0].x, torch::cat(in[1].w), torch::cat(in[2].w),
                          mean, var, training, momentum, eps, false);
    if (training) {  // the statistics were updated in the concatenation
      torch::NoGradGuard no_grad;
      for (size_t k = 0; k < in[3].w.size(); ++k) {
        in[3].w[k].copy_(mean.narrow(0, k * c, c));
        in[4].w[k].copy_(var.narrow(0, k * c, c));
      }
    }
    return y;
  };
}

// Inserts the branch axis: [N, K*C, rest] -> [N, K, C, rest].
torch::Tensor Unfold(const torch::Tensor& x, int64_t k) {
  std::vector<int64_t> s = {x.size(0), k, -1};
  for (int64_t d = 2; d < x.dim(); ++d) s.push_back(x.size(d));
  return x.reshape(s);
}

// [N, K, C, rest] -> [N, K*C, rest].
torch::Tensor Fold(const torch::Tensor& x) {
  std::vector<int64_t> s = {x.size(0), -1};
  for (int64_t d = 3; d < x.dim(); ++d) s.push_back(x.size(d));
  return x.reshape(s);
}

StatusOr<BatchedKernel> BuildKernel(const Graph& g, const Node& n, int64_t k,
                                    const std::vector<Kind>& kinds) {
  const Shape out = g.FindTensor(n.outputs[0])->shape;
  const int64_t c = out.size() > 1 ? out[1] : 1;
  if (n.op == "Conv" || n.op == "Gemm")
    for (size_t i = 1; i < kinds.size(); ++i)
      if (kinds[i] != Kind::kWeight && kinds[i] != Kind::kAbsent)
        return Unsupported(Label(n) + " takes input " + std::to_string(i) +
                           " from an activation");
  if (n.op == "Conv") return ConvKernel(g, n, k, kinds[0]);
  if (n.op == "Gemm") return GemmKernel(n, k, kinds[0]);
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == Kind::kWeight && n.op != "BatchNormalization")
      return Unsupported(Label(n) + " reads weight input " + std::to_string(i));
  if (n.op == "BatchNormalization") return BatchNormKernel(n, c);
  if (ActsPerChannel(n)) {
    ASSIGN_OR_RETURN(TorchKernel plain, BuildTorchKernel(g, n));
    return BatchedKernel([plain](const std::vector<Arg>& in, bool training) {
      return plain({in[0].x}, training)[0];
    });
  }
  if (n.op == "LRN" || n.op == "SpaceToDepth") {
    // Across channels within a branch: each branch as its own image.
    ASSIGN_OR_RETURN(TorchKernel plain, BuildTorchKernel(g, n));
    return BatchedKernel([plain, k](const std::vector<Arg>& in, bool tr) {
      const torch::Tensor x = Unfold(in[0].x, k);  // [N, K, C, H, W]
      std::vector<int64_t> s = {-1};
      for (int64_t d = 2; d < x.dim(); ++d) s.push_back(x.size(d));
      const torch::Tensor y = plain({x.reshape(s)}, tr)[0];  // [N*K, C', ...]
      std::vector<int64_t> back = {x.size(0), -1};
      for (int64_t d = 2; d < y.dim(); ++d) back.push_back(y.size(d));
      return y.reshape(back);
    });
  }
  if (n.op == "Flatten") {
    const int64_t rank = g.FindTensor(n.inputs[0])->shape.size();
    const int64_t axis = n.attrs.GetInt("axis", 1);
    if (axis != 1 && axis != 1 - rank)
      return Unsupported(Label(n) + " flattens from axis " +
                         std::to_string(axis));
    // Branch-major order on axis 1 is each branch's own flattening, in turn.
    return BatchedKernel([](const std::vector<Arg>& in, bool) {
      return in[0].x.reshape({in[0].x.size(0), -1});
    });
  }
  if (n.op == "Add" || n.op == "Sub" || n.op == "Mul" || n.op == "Div") {
    // Both operands must hold the same per-branch extent on axis 1, or the
    // batched tensors would broadcast across branches.
    const Shape a = g.FindTensor(n.inputs[0])->shape;
    const Shape b = g.FindTensor(n.inputs[1])->shape;
    if (a.size() < 2 || b.size() != a.size() || a[1] != b[1])
      return Unsupported(Label(n) + " broadcasts " + ShapeToString(a) +
                         " with " + ShapeToString(b) + " on axis 1");
    const std::string op = n.op;
    return BatchedKernel([op](const std::vector<Arg>& in, bool) {
      const auto& x = in[0].x;
      const auto& y = in[1].x;
      if (op == "Add") return x + y;
      if (op == "Sub") return x - y;
      if (op == "Mul") return x * y;
      return x / y;
    });
  }
  if (n.op == "Concat") {
    const int64_t rank = g.FindTensor(n.inputs[0])->shape.size();
    int64_t axis = n.attrs.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 1) return Unsupported(Label(n) + " concatenates the batch");
    return BatchedKernel([axis, k](const std::vector<Arg>& in, bool) {
      TensorList parts;
      for (const auto& a : in) parts.push_back(Unfold(a.x, k));
      return Fold(torch::cat(parts, axis + 1));
    });
  }
  return Unsupported(Label(n) + ": no batched form of " + n.op);
}

}  // namespace

struct BatchedBranches::Step {
  const Node* node;
  std::vector<Kind> kinds;
  std::vector<int> slots;                         // kBranch inputs
  std::vector<std::string> shared;                // kShared inputs
  std::vector<std::vector<std::string>> weights;  // kWeight: per branch
  std::vector<bool> repeat;  // a shared input the op needs batched
  int out = 0;
  Shape out_shape;  // branch 0's
  BatchedKernel kernel;
};

BatchedBranches::~BatchedBranches() = default;

StatusOr<std::unique_ptr<BatchedBranches>> BatchedBranches::Create(
    const Graph& g) {
  // Each branch's nodes in graph order, by name within the branch.
  std::map<int64_t, std::vector<const Node*>> branch;
  for (const auto& n : g.nodes) {
    std::string rest;
    const int64_t k = ParseBranch(n.name, &rest);
    if (k >= 0) branch[k].push_back(&n);
  }
  if (branch.size() < 2) return FailedPrecondition("fewer than 2 branches");
  const int64_t K = static_cast<int64_t>(branch.size());
  if (branch.rbegin()->first != K - 1)
    return FailedPrecondition("branch numbers are not 0.." +
                              std::to_string(K - 1));
  std::unique_ptr<BatchedBranches> b(new BatchedBranches());
  b->k_ = K;
  const auto& b0 = branch[0];
  for (int64_t k = 1; k < K; ++k)
    if (branch[k].size() != b0.size())
      return FailedPrecondition("branch " + std::to_string(k) + " has " +
                                std::to_string(branch[k].size()) +
                                " nodes, branch 0 " +
                                std::to_string(b0.size()));
  std::set<std::string> graph_inputs(g.inputs.begin(), g.inputs.end());
  for (size_t i = 0; i < b0.size(); ++i) {
    const Node& n = *b0[i];
    std::string name_rest;
    ParseBranch(n.name, &name_rest);
    // Every copy must be the same layer: op, attributes, wiring.
    for (int64_t k = 1; k < K; ++k) {
      const Node& c = *branch[k][i];
      if (c.name != InBranch(k, name_rest) || c.op != n.op ||
          !(c.attrs == n.attrs) || c.inputs.size() != n.inputs.size() ||
          c.outputs.size() != 1 || n.outputs.size() != 1)
        return FailedPrecondition("'" + c.name + "' is not a copy of '" +
                                  n.name + "'");
      // Unequal branches (lcp split --cluster) cannot stack side by side.
      if (g.FindTensor(c.outputs[0])->shape !=
          g.FindTensor(n.outputs[0])->shape)
        return FailedPrecondition("'" + c.name + "' is not as wide as '" +
                                  n.name + "' (unequal branches)");
    }
    auto step = std::make_unique<Step>();
    step->node = &n;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      const std::string& in = n.inputs[j];
      std::string rest;
      Kind kind;
      if (in.empty()) {
        kind = Kind::kAbsent;
      } else if (graph_inputs.count(in)) {
        kind = Kind::kShared;
      } else if (ParseBranch(in, &rest) == 0 &&
                 (b->tensors_.count(in) || g.FindTensor(in)->is_weight())) {
        kind = b->tensors_.count(in) ? Kind::kBranch : Kind::kWeight;
      } else {
        return FailedPrecondition(Label(n) + " reads '" + in +
                                  "' from outside the branches");
      }
      for (int64_t k = 1; k < K; ++k) {
        const std::string& ck = branch[k][i]->inputs[j];
        const bool ok = kind == Kind::kAbsent   ? ck.empty()
                        : kind == Kind::kShared ? ck == in
                                                : ck == InBranch(k, rest);
        if (!ok)
          return FailedPrecondition("'" + branch[k][i]->name + "' reads '" +
                                    ck + "' where '" + n.name + "' reads '" +
                                    in + "'");
      }
      step->kinds.push_back(kind);
      step->slots.push_back(kind == Kind::kBranch ? b->tensors_.at(in).slot
                                                  : -1);
      step->shared.push_back(kind == Kind::kShared ? in : "");
      std::vector<std::string> ws;
      if (kind == Kind::kWeight)
        for (int64_t k = 0; k < K; ++k) ws.push_back(InBranch(k, rest));
      step->weights.push_back(ws);
    }
    ASSIGN_OR_RETURN(step->kernel, BuildKernel(g, n, K, step->kinds));
    // Only conv and fc read a shared input directly (stacked filters);
    // other ops get it repeated once per branch.
    const bool direct = n.op == "Conv" || n.op == "Gemm";
    for (size_t j = 0; j < step->kinds.size(); ++j)
      step->repeat.push_back(step->kinds[j] == Kind::kShared &&
                             (!direct || j > 0));
    step->out_shape = g.FindTensor(n.outputs[0])->shape;
    if (step->out_shape.size() < 2)
      return FailedPrecondition(Label(n) + " gives a rank-" +
                                std::to_string(step->out_shape.size()) +
                                " tensor");
    step->out = b->slots_++;
    b->tensors_[n.outputs[0]] = {step->out, 0, step->out_shape[1]};
    for (int64_t k = 0; k < K; ++k) b->nodes_.insert(branch[k][i]->name);
    b->steps_.push_back(std::move(step));
  }
  // Branch tensors read outside the branches (the pre-final activations).
  std::vector<std::string> read;
  for (const auto& n : g.nodes)
    if (!b->nodes_.count(n.name))
      read.insert(read.end(), n.inputs.begin(), n.inputs.end());
  read.insert(read.end(), g.outputs.begin(), g.outputs.end());
  for (const auto& t : read) {
    std::string rest;
    const int64_t k = ParseBranch(t, &rest);
    if (k < 0 || g.FindTensor(t) == nullptr || g.FindTensor(t)->is_weight())
      continue;
    auto it = b->tensors_.find(InBranch(0, rest));
    if (it == b->tensors_.end()) continue;
    b->exported_[t] = {it->second.slot, k, it->second.c};
  }
  return b;
}

Status BatchedBranches::Run(const std::map<std::string, torch::Tensor>& inputs,
                            const std::map<std::string, torch::Tensor>& weights,
                            bool training,
                            std::map<std::string, torch::Tensor>* out) const {
  std::vector<torch::Tensor> vals(slots_);
  for (const auto& step : steps_) {
    const Node& n = *step->node;
    std::vector<Arg> args(step->kinds.size());
    for (size_t j = 0; j < args.size(); ++j) {
      Arg& a = args[j];
      a.kind = step->kinds[j];
      if (a.kind == Kind::kBranch) a.x = vals[step->slots[j]];
      if (a.kind == Kind::kShared) {
        a.x = inputs.at(step->shared[j]);
        if (step->repeat[j]) {
          std::vector<int64_t> r(a.x.dim(), 1);
          r[1] = k_;
          a.x = a.x.repeat(r);
          a.kind = Kind::kBranch;
        }
      }
      for (const auto& w : step->weights[j]) a.w.push_back(weights.at(w));
    }
    torch::Tensor y;
    try {
      y = step->kernel(args, training);
    } catch (const std::exception& e) {
      return Internal("libtorch failed on the batched branches of " + Label(n) +
                      ": " + e.what());
    }
    // Branch 0's shape with axis 1 K times wider, any batch.
    const Shape& want = step->out_shape;
    bool same = y.dim() == static_cast<int64_t>(want.size()) &&
                y.size(1) == k_ * want[1];
    for (size_t d = 2; same && d < want.size(); ++d)
      same = y.size(d) == want[d];
    if (!same)
      return Internal("the batched branches of " + Label(n) + " gave " +
                      ShapeToString(Shape(y.sizes().begin(), y.sizes().end())) +
                      ", expected " + std::to_string(k_) + " x " +
                      ShapeToString(want) + " on axis 1");
    vals[step->out] = y;
  }
  for (const auto& [name, s] : exported_)
    (*out)[name] = vals[s.slot].narrow(1, s.k * s.c, s.c);
  return Status::Ok();
}

}  // namespace shoal
