#include "plan/int8_transfers.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "graph/quantization.h"

namespace shoal {
namespace {

using Key = std::pair<int, std::string>;  // (task, tensor)
using Index = std::map<Key, std::vector<int>>;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const Node* ProducerIn(const Graph& g, const std::string& tensor) {
  const int i = g.ProducerIndex(tensor);
  return i < 0 ? nullptr : &g.nodes[i];
}

// The transfers into each (task, input).
Index Incoming(const Plan& p) {
  Index into;
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    const Transfer& x = p.transfers[i];
    into[{x.dst.task, x.dst.tensor}].push_back(static_cast<int>(i));
  }
  return into;
}

bool HoldsInt8(const Plan& p, const Index& into, const Task& t,
               const std::string& tensor) {
  const Node* q = ProducerIn(t.fragment, tensor);
  if (q) return QuantRoleOf(q) == QuantRole::kQuantize;
  if (!Contains(t.fragment.inputs, tensor)) return false;
  auto it = into.find({t.id, tensor});
  if (it == into.end() || it->second.empty()) return false;
  for (int xi : it->second)
    if (!p.transfers[xi].int8) return false;
  return true;
}

bool CanBeInt8(const Plan& p, const Index& into, const Transfer& x) {
  if (x.src.task < 0 || x.merge != Merge::kCopy) return false;
  const Task* s = p.FindTask(x.src.task);
  return s && HoldsInt8(p, into, *s, x.src.tensor);
}

// The per-tensor DequantizeLinear of `t` that makes `tensor` from int8
// integers, or null.
const Node* SentDequantize(const Plan& p, const Index& into, const Task& t,
                           const std::string& tensor) {
  const Node* dq = ProducerIn(t.fragment, tensor);
  if (QuantRoleOf(dq) != QuantRole::kDequantize || dq->inputs.size() != 1)
    return nullptr;
  const TensorInfo* in = t.fragment.FindTensor(dq->inputs[0]);
  if (!in) return nullptr;
  auto params = ReadQuantParams(*dq, in->shape);
  if (!params.ok() || !params->per_tensor()) return nullptr;
  return HoldsInt8(p, into, t, dq->inputs[0]) ? dq : nullptr;
}

bool SameParams(const Node& a, const Node& b) {
  return a.attrs.GetFloats("scale") == b.attrs.GetFloats("scale") &&
         a.attrs.GetInts("zero_point") == b.attrs.GetInts("zero_point");
}

std::string FreeTensorName(const Graph& g, std::string n) {
  while (g.FindTensor(n)) n += "_";
  return n;
}

std::string FreeNodeName(const Graph& g, std::string n) {
  while (g.FindNode(n)) n += "_";
  return n;
}

class Int8Mover {
 public:
  explicit Int8Mover(Plan* p) : p_(*p), into_(Incoming(*p)) {
    for (size_t i = 0; i < p_.transfers.size(); ++i) {
      const Transfer& x = p_.transfers[i];
      from_[{x.src.task, x.src.tensor}].push_back(static_cast<int>(i));
      by_receiver_[x.dst.task].push_back(static_cast<int>(i));
    }
  }

  int Run() {
    // Tasks receive only from earlier ones: in id order, every source is
    // final when its receivers are looked at.
    for (Task& t : p_.tasks) {
      MarkInto(t.id);
      const std::vector<std::string> inputs = t.fragment.inputs;
      for (const auto& in : inputs) TryMove(t, in);
    }
    MarkInto(kModelOutput);
    for (Task& t : p_.tasks) DropUnsent(t);
    int marked = 0;
    for (const Transfer& x : p_.transfers) marked += x.int8;
    return marked;
  }

 private:
  void MarkInto(int task) {
    for (int xi : by_receiver_[task]) {
      Transfer& x = p_.transfers[xi];
      x.int8 = CanBeInt8(p_, into_, x);
    }
  }

  // Moves the DQ that every transfer into `in` of `t` copies from, when
  // they all have one of the same parameters.
  void TryMove(Task& t, const std::string& in) {
    auto it = into_.find({t.id, in});
    if (it == into_.end() || it->second.empty()) return;
    // A task that passes `in` on, or sends it back out, keeps it as it is.
    if (from_.count({t.id, in}) || Contains(t.fragment.outputs, in)) return;
    const std::vector<int> xs = it->second;
    std::vector<std::string> quantized;
    Node moved;
    for (int xi : xs) {
      const Transfer& x = p_.transfers[xi];
      if (x.src.task < 0 || x.merge != Merge::kCopy) return;
      const Node* dq =
          SentDequantize(p_, into_, p_.tasks[x.src.task], x.src.tensor);
      if (!dq || (!quantized.empty() && !SameParams(*dq, moved))) return;
      if (quantized.empty()) moved = *dq;
      quantized.push_back(dq->inputs[0]);
    }
    Graph& g = t.fragment;
    const std::string q = FreeTensorName(g, in + ".int8");
    TensorInfo info = g.tensors.at(in);
    info.name = q;
    g.tensors[q] = info;
    std::replace(g.inputs.begin(), g.inputs.end(), in, q);
    moved.name = FreeNodeName(g, moved.name);
    moved.inputs = {q};
    moved.outputs = {in};
    g.nodes.insert(g.nodes.begin(), std::move(moved));
    into_.erase(it);
    for (size_t k = 0; k < xs.size(); ++k) {
      Transfer& x = p_.transfers[xs[k]];
      auto& old = from_[{x.src.task, x.src.tensor}];
      old.erase(std::remove(old.begin(), old.end(), xs[k]), old.end());
      x.src.tensor = quantized[k];
      x.dst.tensor = q;
      x.int8 = true;
      from_[{x.src.task, x.src.tensor}].push_back(xs[k]);
      into_[{t.id, q}].push_back(xs[k]);
      Graph& s = p_.tasks[x.src.task].fragment;
      if (!Contains(s.inputs, quantized[k]) &&
          !Contains(s.outputs, quantized[k]))
        s.outputs.push_back(quantized[k]);
    }
  }

  // Removes the DQs whose outputs nothing reads or receives any more.
  void DropUnsent(Task& t) {
    Graph& g = t.fragment;
    for (size_t i = 0; i < g.outputs.size();) {
      const std::string o = g.outputs[i];
      auto sent = from_.find({t.id, o});
      const int producer = g.ProducerIndex(o);
      if ((sent != from_.end() && !sent->second.empty()) ||
          !g.ConsumerIndices(o).empty() || producer < 0 ||
          QuantRoleOf(&g.nodes[producer]) != QuantRole::kDequantize) {
        ++i;
        continue;
      }
      g.nodes.erase(g.nodes.begin() + producer);
      g.tensors.erase(o);
      g.outputs.erase(g.outputs.begin() + i);
    }
  }

  Plan& p_;
  Index into_, from_;
  std::map<int, std::vector<int>> by_receiver_;  // transfers by dst task
};

}  // namespace

StatusOr<int> SendInt8(Plan* p) {
  // Only a QuantizeLinear makes int8 integers: a float plan is left as it
  // is without building any index.
  bool quantized = false;
  for (const Task& t : p->tasks) {
    for (const Node& n : t.fragment.nodes)
      quantized |= QuantRoleOf(&n) == QuantRole::kQuantize;
  }
  if (!quantized) return 0;
  return Int8Mover(p).Run();
}

Status CheckInt8Transfers(const Plan& p) {
  const Index into = Incoming(p);
  for (const Transfer& x : p.transfers) {
    if (!x.int8 || CanBeInt8(p, into, x)) continue;
    const Task* s = p.FindTask(x.src.task);
    const Task* d = p.FindTask(x.dst.task);
    return InvalidArgument(
        "transfer of '" + x.src.tensor + "' from " +
        (s ? "task " + s->name : std::string("the model input")) + " to " +
        (d ? "task " + d->name : std::string("the model output")) +
        " is marked int8, but it " +
        (x.merge != Merge::kCopy
             ? "is summed (int8 transfers are copies)"
             : "does not copy int8 integers (the output of a "
               "QuantizeLinear, or an input that int8 transfers fill)"));
  }
  return Status::Ok();
}

}  // namespace shoal
