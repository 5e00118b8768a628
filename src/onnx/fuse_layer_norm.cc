#include "onnx/fuse_layer_norm.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace shoal {
namespace {

using Readers = std::map<std::string, std::vector<int>>;

// The one node reading `t` (possibly twice), or -1.
int SoleReader(const Readers& readers, const std::set<std::string>& outputs,
               const std::string& t) {
  auto it = readers.find(t);
  if (it == readers.end() || outputs.count(t)) return -1;
  std::set<int> r(it->second.begin(), it->second.end());
  return r.size() == 1 ? *r.begin() : -1;
}

bool Is(const onnx::NodeProto& n, const char* op, int inputs) {
  return n.op_type() == op && n.domain().empty() && n.input_size() == inputs &&
         n.output_size() == 1;
}

// The operand of binary `n` other than `t`, or "" when `t` is not one.
std::string Other(const onnx::NodeProto& n, const std::string& t) {
  if (n.input(0) == t) return n.input(1);
  if (n.input(1) == t) return n.input(0);
  return "";
}

// A ReduceMean keeping its axes; its axes attribute or input.
bool MeanOf(const onnx::NodeProto& n, std::vector<int64_t>* axes,
            std::string* axes_input) {
  if (n.op_type() != "ReduceMean" || !n.domain().empty() ||
      n.output_size() != 1 || n.input_size() < 1 || n.input_size() > 2) {
    return false;
  }
  for (const auto& a : n.attribute()) {
    if (a.name() == "keepdims" && a.i() != 1) return false;
    if (a.name() == "noop_with_empty_axes" && a.i() != 0) return false;
    if (a.name() == "axes") axes->assign(a.ints().begin(), a.ints().end());
  }
  if (n.input_size() == 2) *axes_input = n.input(1);
  return !axes->empty() || !axes_input->empty();
}

bool Trailing(std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) {
    if (a < -rank || a >= rank) return false;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return false;
  }
  return !axes.empty();
}

}  // namespace

std::map<int, LayerNormChain> FindLayerNormChains(const onnx::GraphProto& g) {
  Readers readers;
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : g.node(i).input()) readers[in].push_back(i);
    for (const auto& o : g.node(i).output()) producer[o] = i;
  }
  std::set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());
  auto next = [&](int i) {
    return SoleReader(readers, outputs, g.node(i).output(0));
  };
  std::map<int, LayerNormChain> out;
  for (int i = 0; i < g.node_size(); ++i) {
    LayerNormChain c;
    if (!MeanOf(g.node(i), &c.axes1, &c.axes1_input)) continue;
    c.x = g.node(i).input(0);
    const int sub = next(i);
    if (sub < 0 || !Is(g.node(sub), "Sub", 2) || g.node(sub).input(0) != c.x ||
        g.node(sub).input(1) != g.node(i).output(0)) {
      continue;
    }
    // d = x - mean is read by the square and by the Div.
    const std::string d = g.node(sub).output(0);
    auto it = readers.find(d);
    if (it == readers.end() || outputs.count(d)) continue;
    std::set<int> dr(it->second.begin(), it->second.end());
    if (dr.size() != 2) continue;
    int sq = -1, div = -1;
    for (int r : dr) {
      const onnx::NodeProto& n = g.node(r);
      if (Is(n, "Div", 2) && n.input(0) == d && n.input(1) != d) {
        div = r;
      } else if (Is(n, "Pow", 2) && n.input(0) == d) {
        sq = r;
        c.exponent = n.input(1);
      } else if (Is(n, "Mul", 2) && n.input(0) == d && n.input(1) == d) {
        sq = r;
      }
    }
    if (sq < 0 || div < 0) continue;
    const int var = next(sq);
    if (var < 0 || !MeanOf(g.node(var), &c.axes2, &c.axes2_input)) continue;
    const int add = next(var);
    if (add < 0 || !Is(g.node(add), "Add", 2)) continue;
    c.epsilon = Other(g.node(add), g.node(var).output(0));
    const int root = next(add);
    if (root < 0 || !Is(g.node(root), "Sqrt", 1) || next(root) != div ||
        g.node(div).input(1) != g.node(root).output(0)) {
      continue;
    }
    const int mul = next(div);
    if (mul < 0 || !Is(g.node(mul), "Mul", 2)) continue;
    c.scale = Other(g.node(mul), g.node(div).output(0));
    if (c.scale.empty() || c.scale == g.node(div).output(0)) continue;
    c.scale_node = mul;
    c.nodes = {i, sub, sq, var, add, root, div, mul};
    int last = mul;
    const int shift = next(mul);
    if (shift >= 0 && Is(g.node(shift), "Add", 2)) {
      c.shift = Other(g.node(shift), g.node(mul).output(0));
      if (!c.shift.empty() && c.shift != g.node(mul).output(0)) {
        c.shift_node = shift;
        c.nodes.push_back(shift);
        last = shift;
      }
    }
    std::sort(c.nodes.begin(), c.nodes.end());
    if (c.nodes.back() != last) continue;
    out[last] = std::move(c);
  }
  return out;
}

std::optional<onnx::NodeProto> LayerNormFromChain(const onnx::GraphProto& g,
                                                  const LayerNormChain& c,
                                                  const LayerNormFacts& f,
                                                  bool with_shift) {
  std::vector<int64_t> a1 = f.axes1, a2 = f.axes2;
  for (auto* v : {&a1, &a2}) {
    for (auto& a : *v) a = a < 0 ? a + f.rank : a;
    std::sort(v->begin(), v->end());
  }
  const int64_t k = static_cast<int64_t>(a1.size());
  if (!Trailing(f.axes1, f.rank) || a1 != a2 || !f.epsilon ||
      !(*f.epsilon >= 0) || !f.scale_rank || *f.scale_rank > k) {
    return std::nullopt;
  }
  if (!c.exponent.empty() && (!f.exponent || *f.exponent != 2.0)) {
    return std::nullopt;
  }
  if (with_shift && (c.shift_node < 0 || !f.shift_rank || *f.shift_rank > k)) {
    return std::nullopt;
  }
  const onnx::NodeProto& last =
      g.node(with_shift ? c.shift_node : c.scale_node);
  onnx::NodeProto n;
  n.set_op_type("LayerNormalization");
  n.set_name(last.name());
  n.add_input(c.x);
  n.add_input(c.scale);
  if (with_shift) n.add_input(c.shift);
  n.add_output(last.output(0));
  auto* axis = n.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-k);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(static_cast<float>(*f.epsilon));
  return n;
}

}  // namespace shoal
