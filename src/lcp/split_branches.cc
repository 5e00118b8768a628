#include "lcp/split_branches.h"

#include <cmath>
#include <map>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "lcp/branch_width.h"
#include "lcp/find_classifier.h"

namespace shoal {
namespace {

// Builds the new graph node by node, shaping each node as it is added so
// the next one can size its weights from its (new) input.
class Rewriter {
 public:
  Rewriter(const Graph& src, Graph* dst) : src_(src), dst_(dst) {}

  // Copies `n` with tensor names mapped by `rename`; `weight_shape` gives
  // each weight input's new shape from the new input shapes.
  // `share` > 0: the branch takes that fraction of each layer's width;
  // 0: 1/K of it.
  Status Copy(const Node& n, const std::string& prefix,
              std::map<std::string, std::string>* rename,
              const BranchOptions& o, bool classifier, double share = 0) {
    Node c = n;
    c.name = prefix + n.name;
    for (auto& in : c.inputs) {
      if (in.empty()) continue;
      auto it = rename->find(in);
      if (it != rename->end()) in = it->second;
    }
    for (auto& out : c.outputs) {
      if (out.empty()) continue;
      (*rename)[out] = prefix + out;
      out = prefix + out;
    }
    RETURN_IF_ERROR(ResizeWeights(n, &c, prefix, o, classifier, share));
    RETURN_IF_ERROR(dst_->AddNode(c));
    return ShapeNode(dst_->nodes.back());
  }

 private:
  const Shape& NewShape(const std::string& t) const {
    return dst_->FindTensor(t)->shape;
  }

  Status ResizeWeights(const Node& n, Node* c, const std::string& prefix,
                       const BranchOptions& o, bool classifier, double share) {
    const auto weights = src_.WeightInputs(n);
    if (weights.empty()) return Status::Ok();
    const Shape& x = NewShape(c->inputs[0]);
    const Shape& x0 = src_.FindTensor(n.inputs[0])->shape;
    auto width = [&](int64_t w) {
      if (classifier) return w;
      return share > 0 ? BranchWidthShare(w, share, o.fatten_pct)
                       : BranchWidth(w, o.branches, o.fatten_pct);
    };
    std::map<std::string, Shape> shapes;  // old weight name -> new shape
    const WeightLayout l = WeightLayoutOf(n);
    if (l.feature_map) {  // a convolution: W [M, C/group, kernel...]
      Shape w = src_.FindTensor(n.inputs[1])->shape;
      const int64_t g = l.groups;
      int64_t& out = w[l.out_axis];
      int64_t& in = w[l.in_axis];
      if (g == 1) {
        out = width(out);
        in = x[1];
      } else if (g == x0[1] && !classifier) {
        // Depthwise / channel-wise: groups follow the channels.
        out = x[1] * (out / g);
        in = 1;
        c->attrs.Set("group", x[1]);
      } else {
        return Unsupported("LCP cannot resize grouped conv '" + n.name +
                           "': group " + std::to_string(g) + " with " +
                           std::to_string(x0[1]) + " input channels");
      }
      shapes[n.inputs[1]] = w;
      if (n.inputs.size() > 2 && !n.inputs[2].empty())
        shapes[n.inputs[2]] = {out};
    } else if (l.any()) {  // rows times a weight: a Gemm or a MatMul
      if (l.transposed_input)
        return Unsupported("LCP cannot resize " + n.op + " '" + n.name +
                           "' with transA");
      Shape w = src_.FindTensor(n.inputs[1])->shape;
      if (w.size() != 2 || !src_.FindTensor(n.inputs[1])->is_weight())
        return Unsupported("LCP needs a 2-D weight in '" + n.name + "'");
      int64_t& out = w[l.out_axis];
      int64_t& in = w[l.in_axis];
      out = width(out);
      in = x.back();
      shapes[n.inputs[1]] = w;
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        Shape b = src_.FindTensor(n.inputs[2])->shape;
        if (!b.empty() && b.back() > 1) b.back() = out;
        shapes[n.inputs[2]] = b;
      }
    } else if (ActsPerChannelWithWeights(n)) {  // BatchNormalization
      for (size_t i = 1; i < n.inputs.size(); ++i) shapes[n.inputs[i]] = {x[1]};
    } else {
      return Unsupported("LCP cannot resize node '" + n.name + "' (" + n.op +
                         "), which reads weights; it resizes Conv, Gemm, "
                         "MatMul and BatchNormalization");
    }
    for (auto& in : c->inputs) {
      auto it = shapes.find(in);
      if (it == shapes.end()) continue;
      const std::string name = prefix + in;
      if (!dst_->FindTensor(name))
        RETURN_IF_ERROR(dst_->AddWeight(name, it->second));
      in = name;
    }
    return Status::Ok();
  }

  Status ShapeNode(const Node& n) {
    const OpSchema* op = OpRegistry::Global().Find(n.op);
    if (!op) return Unsupported("op '" + n.op + "' is not supported");
    ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(*dst_, n));
    std::vector<Shape> out;
    RETURN_IF_ERROR(op->InferShapes(n, in, &out)
                        .WithContext("LCP branch node '" + n.name + "'"));
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      TensorInfo* t = dst_->FindTensor(n.outputs[i]);
      t->shape = out[i];
      t->shaped = true;
    }
    return Status::Ok();
  }

  const Graph& src_;
  Graph* dst_;
};

}  // namespace

std::string BranchPrefix(int64_t k) { return "b" + std::to_string(k) + "/"; }

StatusOr<Graph> SplitIntoBranches(const Graph& g, const BranchOptions& o) {
  if (o.branches < 1)
    return InvalidArgument("--branches must be at least 1, not " +
                           std::to_string(o.branches));
  if (o.fatten_pct < 0) return InvalidArgument("--fatten must not be negative");
  // Normalised shares; equal ones are the equal split (floor(w / K)
  // exactly, not w x (1/K) rounded).
  std::vector<double> shares;
  if (!o.shares.empty()) {
    if (static_cast<int64_t>(o.shares.size()) != o.branches) {
      return InvalidArgument(std::to_string(o.shares.size()) +
                             " branch shares for " +
                             std::to_string(o.branches) + " branches");
    }
    double sum = 0;
    for (double s : o.shares) {
      if (!(s > 0) || !std::isfinite(s)) {
        return InvalidArgument("branch shares must be positive numbers");
      }
      sum += s;
    }
    bool equal = true;
    for (double s : o.shares) {
      equal = equal && std::fabs(s - o.shares[0]) <= 1e-12 * o.shares[0];
      shares.push_back(s / sum);
    }
    if (equal) shares.clear();
  }
  ASSIGN_OR_RETURN(ClassifierSite site, FindClassifier(g));
  const TensorInfo* pre = g.FindTensor(site.prefinal);
  const int64_t pre_width = pre->shape.size() > 1 ? pre->shape[1] : 1;
  if (o.branches > pre_width) {
    return InvalidArgument(
        "--branches " + std::to_string(o.branches) +
        " is larger than the width " + std::to_string(pre_width) +
        " of the pre-final activation '" + site.prefinal +
        "': each branch needs at least one pre-final feature");
  }
  Graph out;
  out.name = g.name + "-split" + std::to_string(o.branches);
  if (!shares.empty()) out.name += "-uneven";
  if (o.fatten_pct > 0)
    out.name += "-f" + std::to_string(static_cast<int>(o.fatten_pct));
  for (const auto& in : g.inputs)
    RETURN_IF_ERROR(out.AddInput(in, g.FindTensor(in)->shape));
  Rewriter rw(g, &out);
  std::vector<std::string> prefinals;
  for (int64_t k = 0; k < o.branches; ++k) {
    std::map<std::string, std::string> rename;
    const double share = shares.empty() ? 0 : shares[k];
    for (int i : site.trunk)
      RETURN_IF_ERROR(
          rw.Copy(g.nodes[i], BranchPrefix(k), &rename, o, false, share));
    prefinals.push_back(rename.at(site.prefinal));
  }
  std::map<std::string, std::string> rename;
  if (prefinals.size() == 1) {
    rename[site.prefinal] = prefinals[0];
  } else {
    Node cat{kLcpConcatNode, "Concat", prefinals, {kLcpPrefinal}, {}};
    cat.attrs.Set("axis", int64_t{1});
    RETURN_IF_ERROR(out.AddNode(cat));
    rename[site.prefinal] = kLcpPrefinal;
    ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(out, out.nodes.back()));
    std::vector<Shape> shapes;
    RETURN_IF_ERROR(
        OpRegistry::Global().Find("Concat")->InferShapes(cat, in, &shapes));
    out.FindTensor(kLcpPrefinal)->shape = shapes[0];
    out.FindTensor(kLcpPrefinal)->shaped = true;
  }
  RETURN_IF_ERROR(rw.Copy(g.nodes[site.classifier], "", &rename, o, true));
  for (int i : site.tail)
    RETURN_IF_ERROR(rw.Copy(g.nodes[i], "", &rename, o, true));
  for (const auto& t : g.outputs)
    out.outputs.push_back(rename.count(t) ? rename[t] : t);
  RETURN_IF_ERROR(InferShapes(&out));
  RETURN_IF_ERROR(VerifyGraph(out).WithContext("LCP branch transform"));
  return out;
}

bool HasLcpBranches(const Graph& g) {
  const std::string prefix = BranchPrefix(0);
  for (const auto& n : g.nodes) {
    if (n.name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

StatusOr<Graph> ExtractBranch(const Graph& branched, int64_t k) {
  const std::string prefix = BranchPrefix(k);
  Graph out;
  out.name = branched.name + "-" + prefix.substr(0, prefix.size() - 1);
  for (const auto& in : branched.inputs)
    RETURN_IF_ERROR(out.AddInput(in, branched.FindTensor(in)->shape));
  std::string last;
  for (const auto& n : branched.nodes) {
    if (n.name.rfind(prefix, 0) != 0) continue;
    for (const auto& w : branched.WeightInputs(n))
      if (!out.FindTensor(w))
        RETURN_IF_ERROR(out.AddWeight(w, branched.FindTensor(w)->shape));
    RETURN_IF_ERROR(out.AddNode(n));
    last = n.outputs[0];
  }
  if (last.empty()) return NotFound("no branch " + std::to_string(k));
  // The branch's output is the tensor the concat (or classifier) reads.
  for (const auto& n : branched.nodes) {
    if (n.name.rfind(prefix, 0) == 0) continue;
    for (const auto& in : n.inputs)
      if (in.rfind(prefix, 0) == 0) last = in;
  }
  out.outputs = {last};
  RETURN_IF_ERROR(InferShapes(&out));
  return out;
}

}  // namespace shoal
