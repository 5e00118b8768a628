#include "engine/onednn/int8_pattern.h"

#include <string>

namespace shoal {
namespace {

const Node* ProducerOf(const ExecBuilder& b, const std::string& tensor) {
  const int p = b.graph().ProducerIndex(tensor);
  return p < 0 ? nullptr : &b.graph().nodes[p];
}

std::optional<QuantParams> ParamsOf(const ExecBuilder& b, const Node& n) {
  const TensorInfo* x = b.graph().FindTensor(n.inputs[0]);
  if (!x) return std::nullopt;
  auto p = ReadQuantParams(n, x->shape);
  if (!p.ok()) return std::nullopt;
  return *p;
}

bool SameParams(const QuantParams& a, const QuantParams& b) {
  return a.scale == b.scale && a.zero_point == b.zero_point && a.axis == b.axis;
}

// The layer's own side of the pattern: its op and attributes, its int8
// weight and bias, and that its input is a per-tensor DQ of int8 values.
std::optional<Int8Layer> MatchLayerSide(const ExecBuilder& b, const Node& layer,
                                        bool need_weights = true) {
  const Graph& g = b.graph();
  int64_t out_axis = 0;
  if (layer.op == "Gemm") {
    if (layer.attrs.GetInt("transA", 0) != 0 ||
        layer.attrs.GetFloat("alpha", 1.f) != 1.f ||
        layer.attrs.GetFloat("beta", 1.f) != 1.f)
      return std::nullopt;
    out_axis = layer.attrs.GetInt("transB", 0) != 0 ? 0 : 1;
  } else if (layer.op == "MatMul") {
    // By a constant [K, N] weight, broadcast over A's batch axes: oneDNN's
    // int8 matmul. Products of two activations stay f32.
    if (layer.inputs.size() != 2) return std::nullopt;
    const TensorInfo* a = g.FindTensor(layer.inputs[0]);
    const TensorInfo* w = g.FindTensor(layer.inputs[1]);
    if (!a || !w || a->shape.size() < 2 || w->shape.size() != 2)
      return std::nullopt;
    out_axis = 1;
  } else if (layer.op != "Conv") {
    return std::nullopt;
  }
  if (layer.inputs.size() < 2) return std::nullopt;
  const Node* dq_w = ProducerOf(b, layer.inputs[1]);
  const Node* dq_x = ProducerOf(b, layer.inputs[0]);
  if (!dq_w || !dq_x || dq_w->op != "DequantizeLinear" ||
      dq_x->op != "DequantizeLinear")
    return std::nullopt;
  const TensorInfo* w = g.FindTensor(dq_w->inputs[0]);
  if (!w || !w->is_weight() || (need_weights && !b.Weight(dq_w->inputs[0])) ||
      b.SoleConsumer(layer.inputs[1]) != &layer)
    return std::nullopt;
  if (layer.inputs.size() > 2 && !layer.inputs[2].empty()) {
    const TensorInfo* bias = g.FindTensor(layer.inputs[2]);
    // One bias value per output channel, as the primitives take it (a
    // Gemm's broadcast bias would make the builder decline after the DQs
    // were taken).
    const TensorInfo* y = g.FindTensor(layer.outputs[0]);
    if (!bias || !bias->is_weight() ||
        (need_weights && !b.Weight(layer.inputs[2])) || !y ||
        y->shape.size() < 2 || NumElements(bias->shape) != y->shape[1])
      return std::nullopt;
  }
  Int8Layer r;
  auto wp = ParamsOf(b, *dq_w);
  auto xp = ParamsOf(b, *dq_x);
  if (!wp || !xp || !xp->per_tensor()) return std::nullopt;
  // s8 weights without a zero point, scaled per output channel at most.
  for (int32_t z : wp->zero_point)
    if (z != 0) return std::nullopt;
  if (!wp->per_tensor() && wp->axis != out_axis) return std::nullopt;
  if (xp->zero_point[0] != 0 && xp->zero_point[0] != kInt8Min)
    return std::nullopt;
  const std::string& source = dq_x->inputs[0];
  const Node* q = ProducerOf(b, source);
  if (q && q->op == "QuantizeLinear") {
    auto qp = ParamsOf(b, *q);
    if (!qp || !SameParams(*qp, *xp)) return std::nullopt;
    r.quantize = q;
  } else {
    // Already int8 values: a graph input where a plan cut the model at a
    // Q's output, or whatever else produced them. Not constant data.
    const TensorInfo* t = g.FindTensor(source);
    if (!t || t->is_weight()) return std::nullopt;
  }
  r.source = source;
  r.weight_dequant = dq_w;
  r.x = *xp;
  r.w = *wp;
  r.unsigned_x = xp->zero_point[0] == kInt8Min;
  r.f32_sums = b.int8_path() == Int8Path::kF32Sums;
  return r;
}

// Every reader of the int8 values is a DQ of the same parameters, read
// only by int8 layers: then no one needs them, nor their DQs, as f32.
bool QuantizedOnlyForInt8Layers(const ExecBuilder& b, const std::string& source,
                                const QuantParams& p) {
  if (b.IsGraphOutput(source)) return false;
  for (const Node* dq : b.Consumers(source)) {
    if (dq->op != "DequantizeLinear" || dq->inputs[0] != source) return false;
    auto dp = ParamsOf(b, *dq);
    if (!dp || !SameParams(*dp, p) || b.IsGraphOutput(dq->outputs[0]))
      return false;
    for (const Node* layer : b.Consumers(dq->outputs[0])) {
      if (layer->inputs[0] != dq->outputs[0]) return false;
      for (size_t k = 1; k < layer->inputs.size(); ++k)
        if (layer->inputs[k] == dq->outputs[0]) return false;
      // The other readers by their structure only: one built before this
      // layer has taken its weights already, and must still count as int8.
      if (!MatchLayerSide(b, *layer, /*need_weights=*/false)) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Int8Layer> MatchInt8Layer(const ExecBuilder& b,
                                        const Node& layer) {
  if (!b.use_onednn()) return std::nullopt;
  auto r = MatchLayerSide(b, layer);
  if (!r || !QuantizedOnlyForInt8Layers(b, r->source, r->x))
    return std::nullopt;
  return r;
}

memory::data_type Int8SourceType(const Int8Layer& l) {
  return l.unsigned_x ? memory::data_type::u8 : memory::data_type::s8;
}

memory::data_type Int8ComputeSourceType(const Int8Layer& l) {
  return l.f32_sums ? memory::data_type::f32 : Int8SourceType(l);
}

memory::data_type Int8WeightType(const Int8Layer& l) {
  return l.f32_sums ? memory::data_type::f32 : memory::data_type::s8;
}

Int8Scales SetInt8OutputScales(ExecBuilder& b, const Int8Layer& l,
                               int64_t channels, int rank, int channel_axis,
                               dnnl::primitive_attr* attr) {
  Int8Scales r;
  r.scales.resize(channels);
  for (int64_t c = 0; c < channels; ++c)
    r.scales[c] = l.x.scale[0] * l.w.scale[l.w.per_tensor() ? 0 : c];
  if (l.f32_sums) {
    // One scale per channel either way: the post-op's operand is small.
    memory::dims dims(rank, 1);
    dims[channel_axis] = channels;
    const memory::desc md = PlainDims(dims);
    dnnl::post_ops po;
    po.append_binary(dnnl::algorithm::binary_mul, md);
    attr->set_post_ops(po);
    r.operand = ReorderedWeights(b.engine(), r.scales.data(), md, md);
  } else if (l.w.per_tensor()) {
    attr->set_output_scales(0, {r.scales[0]});
  } else {
    attr->set_output_scales(1 << channel_axis, r.scales);
  }
  return r;
}

void FinishInt8Step(Int8Scales& s, PrimitiveStep* step) {
  // The binary post-op is the first of the attribute's (FuseActivation
  // appends after it).
  if (s.operand)
    step->AddFixed(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                   std::move(*s.operand));
  step->int8_layer = true;
}

std::vector<float> Int8Bias(const std::vector<float>& bias,
                            const std::vector<float>& scales) {
  std::vector<float> out = bias;
  for (size_t c = 0; c < out.size() && !scales.empty(); ++c)
    out[c] /= scales[c % scales.size()];
  return out;
}

void MarkInt8Fusions(ExecBuilder& b) {
  for (const Node& n : b.graph().nodes) {
    auto r = MatchInt8Layer(b, n);
    if (!r) continue;
    b.MarkFused(r->weight_dequant->name);
    for (const Node* dq : b.Consumers(r->source)) b.MarkFused(dq->name);
  }
}

}  // namespace shoal
