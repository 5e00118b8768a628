#include "cli/kernels_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/calibrate.h"
#include "graph/fuse_batchnorm.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace shoal {

std::vector<Tensor> UniformSamples(const Shape& shape, int n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Tensor t(shape);
    for (float& v : t.data) v = u(rng);
    out.push_back(std::move(t));
  }
  return out;
}

Status QuantizeOnUniformInputs(Model* m, uint64_t seed) {
  RETURN_IF_ERROR(FuseBatchNorm(m).status());
  if (m->graph.inputs.size() != 1) {
    return InvalidArgument("--dtype int8 needs a model with one input");
  }
  const Shape& in = m->graph.FindTensor(m->graph.inputs[0])->shape;
  ASSIGN_OR_RETURN(QdqSummary s,
                   QuantizeStatic(UniformSamples(in, 16, seed), m));
  if (s.layers == 0) {
    return FailedPrecondition("model '" + m->graph.name +
                              "' has no Conv, Gemm or MatMul to quantize");
  }
  return Status::Ok();
}

namespace {

// A quantized layer cut out of its graph: from the int8 tensor its input
// DequantizeLinear reads to `output` (the Q after a qc8 layer's
// activation and pooling, or the layer's own output).
struct Cut {
  std::string node, input, output;
  bool qc8 = false;
};

// The Q whose output a qc8 layer computes: the engine chose qc8 because
// its output reaches a QuantizeLinear through sole readers that keep
// values in place (an activation, a MaxPool, a reshape: at most three,
// qc8_layer.cc), so the first Q along that chain; "" if there is none.
std::string QuantizeAfter(const Graph& g, const Node& layer) {
  std::string t = layer.outputs[0];
  for (int hops = 0; hops < 4; ++hops) {
    const std::vector<int> c = g.ConsumerIndices(t);
    if (c.size() != 1) return "";
    const Node& n = g.nodes[c[0]];
    if (QuantRoleOf(&n) == QuantRole::kQuantize) return n.outputs[0];
    if (n.outputs.empty()) return "";
    t = n.outputs[0];
  }
  return "";
}

// The graph computing `c.output` from `c.input` (a graph input holding
// int8 values) and the weights.
StatusOr<Model> CutOut(const Model& m, const Cut& c) {
  const Graph& g = m.graph;
  std::set<std::string> needed = {c.output};
  std::vector<const Node*> picked;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    const bool wanted =
        std::any_of(it->outputs.begin(), it->outputs.end(),
                    [&](const std::string& o) { return needed.count(o) > 0; });
    if (!wanted) continue;
    picked.push_back(&*it);
    for (const auto& in : it->inputs) {
      if (!in.empty() && in != c.input) needed.insert(in);
    }
  }
  Model f;
  f.graph.name = g.name + "/" + c.node;
  RETURN_IF_ERROR(f.graph.AddInput(c.input, g.FindTensor(c.input)->shape));
  for (const auto& t : needed) {
    const TensorInfo* info = g.FindTensor(t);
    if (info == nullptr || !info->is_weight()) continue;
    RETURN_IF_ERROR(f.graph.AddWeight(t, info->shape));
    f.weights[t] = m.weights.at(t);
  }
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) {
    RETURN_IF_ERROR(f.graph.AddNode(**it));
  }
  f.graph.outputs = {c.output};
  RETURN_IF_ERROR(InferShapes(&f.graph));
  return f;
}

StatusOr<std::vector<std::vector<Tensor>>> RunAll(
    const Model& m, Backend backend, int threads,
    const std::vector<std::vector<Tensor>>& inputs,
    std::vector<NodeKernel>* kernels = nullptr) {
  ExecutorOptions o;
  o.backend = backend;
  o.threads = threads;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(m.graph, m.weights, o));
  if (kernels != nullptr) {
    ASSIGN_OR_RETURN(*kernels, KernelsOfNodes(m.graph, *ex));
  }
  std::vector<std::vector<Tensor>> out;
  for (const auto& in : inputs) {
    std::vector<Tensor> y;
    RETURN_IF_ERROR(ex->Run(in, &y));
    out.push_back(std::move(y));
  }
  return out;
}

float LargestMagnitude(const Tensor& t) {
  float m = 0;
  for (float v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace

StatusOr<BackendCheck> CheckAgainstReference(
    const Model& m, const std::vector<NodeKernel>& nodes, Backend backend,
    int threads, int samples, uint64_t seed) {
  const Graph& g = m.graph;
  if (g.inputs.size() != 1) {
    return InvalidArgument("--check needs a model with one input");
  }
  // The layers to cut out, and every tensor the reference must show.
  std::vector<Cut> cuts;
  Model ref = m;
  std::set<std::string> shown(g.outputs.begin(), g.outputs.end());
  for (const NodeKernel& k : nodes) {
    if (k.kernel != "xnnpack" || (k.impl != "qc8" && k.impl != "f32-sums"))
      continue;
    const Node* layer = g.FindNode(k.node);
    if (layer == nullptr || layer->inputs.empty()) continue;
    const int dq = g.ProducerIndex(layer->inputs[0]);
    if (dq < 0 || QuantRoleOf(&g.nodes[dq]) != QuantRole::kDequantize) {
      continue;
    }
    Cut c{k.node, g.nodes[dq].inputs[0],
          k.impl == "qc8" ? QuantizeAfter(g, *layer) : layer->outputs[0],
          k.impl == "qc8"};
    if (c.output.empty()) {
      return Internal("qc8 layer " + k.node + " feeds no QuantizeLinear");
    }
    for (const auto& t : {c.input, c.output}) {
      if (shown.insert(t).second) ref.graph.outputs.push_back(t);
    }
    cuts.push_back(c);
  }
  std::map<std::string, size_t> at;  // reference output index by tensor
  for (size_t i = 0; i < ref.graph.outputs.size(); ++i)
    at[ref.graph.outputs[i]] = i;

  std::vector<std::vector<Tensor>> inputs;
  for (Tensor& t :
       UniformSamples(g.FindTensor(g.inputs[0])->shape, samples, seed)) {
    inputs.push_back({std::move(t)});
  }
  ASSIGN_OR_RETURN(auto want,
                   RunAll(ref, Backend::kReference, threads, inputs));
  ASSIGN_OR_RETURN(auto got, RunAll(m, backend, threads, inputs));

  BackendCheck r;
  r.samples = samples;
  for (int s = 0; s < samples; ++s) {
    const auto& a = got[s][0].data;
    const auto& b = want[s][0].data;
    if (a.size() != b.size()) return Internal("output sizes differ");
    r.top1_equal += std::max_element(a.begin(), a.end()) - a.begin() ==
                    std::max_element(b.begin(), b.end()) - b.begin();
    float diff = 0;
    for (size_t i = 0; i < a.size(); ++i)
      diff = std::max(diff, std::fabs(a[i] - b[i]));
    const float scale = LargestMagnitude(want[s][0]);
    r.max_diff = std::max(r.max_diff,
                          static_cast<double>(scale > 0 ? diff / scale : diff));
  }

  for (const Cut& c : cuts) {
    ASSIGN_OR_RETURN(Model f, CutOut(m, c));
    std::vector<std::vector<Tensor>> in;
    for (int s = 0; s < samples; ++s) in.push_back({want[s][at[c.input]]});
    std::vector<NodeKernel> kernels;
    ASSIGN_OR_RETURN(auto y, RunAll(f, backend, threads, in, &kernels));
    LayerCheck l;
    l.node = c.node;
    for (const NodeKernel& k : kernels)
      if (k.node == c.node) l.impl = k.impl;
    int64_t off = 0;
    for (int s = 0; s < samples; ++s) {
      const Tensor& w = want[s][at[c.output]];
      const Tensor& a = y[s][0];
      if (a.data.size() != w.data.size()) {
        return Internal(c.node + ": the cut-out layer's output size differs");
      }
      const float scale = c.qc8 ? 1.f : LargestMagnitude(w);
      for (size_t i = 0; i < a.data.size(); ++i) {
        const float d = std::fabs(a.data[i] - w.data[i]);
        off += d != 0;
        l.max_diff = std::max(l.max_diff,
                              static_cast<double>(scale > 0 ? d / scale : d));
      }
      l.values += static_cast<int64_t>(a.data.size());
    }
    l.off_fraction = l.values > 0 ? static_cast<double>(off) / l.values : 0;
    r.layers.push_back(l);
  }
  return r;
}

}  // namespace shoal
