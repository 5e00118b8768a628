#include "engine/xnnpack/xnn_step.h"

#include <iostream>
#include <thread>

namespace shoal {

Status InitXnnpack() {
  // xnn_initialize is idempotent in effect but counts its calls; one per
  // process, never deinitialised (operators may outlive any executor in
  // a SharedWeights).
  static const xnn_status status = xnn_initialize(nullptr);
  if (status == xnn_status_success) return Status::Ok();
  if (status == xnn_status_unsupported_hardware) {
    return Unsupported(
        "XNNPACK does not run on this CPU (it needs SSE2 on x86, NEON on "
        "ARM): use --backend onednn or reference");
  }
  return Internal(std::string("XNNPACK failed to initialise: ") +
                  XnnStatusName(status));
}

ThreadpoolPtr MakeThreadpool(int threads) {
  if (threads <= 0)
    threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 1) return nullptr;
  return ThreadpoolPtr(pthreadpool_create(static_cast<size_t>(threads)));
}

const char* XnnStatusName(xnn_status s) {
  switch (s) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown status";
}

const float* XnnStep::HoldConstant(std::vector<float> data) {
  weight_bytes += static_cast<int64_t>(data.size() * sizeof(float));
  // XNNPACK may read XNN_EXTRA_BYTES past the end of an operand.
  data.resize(data.size() + XNN_EXTRA_BYTES / sizeof(float), 0.f);
  constants_.push_back(std::make_unique<std::vector<float>>(std::move(data)));
  return constants_.back()->data();
}

Status XnnStep::Bind(const std::vector<void*>& ptrs) {
  in_.clear();
  out_.clear();
  for (int v : reads) in_.push_back(ptrs[v]);
  for (int v : writes) out_.push_back(ptrs[v]);
  return Status::Ok();
}

Status XnnStep::Run(RunContext& ctx) {
  for (const Call& c : calls_) {
    std::lock_guard<std::mutex> lock(c.op->mu);
    xnn_status s = c.setup(c.op->op, in_, out_, ctx.threadpool);
    if (s != xnn_status_success)
      return Internal(std::string("XNNPACK setup failed: ") + XnnStatusName(s));
    s = xnn_run_operator(c.op->op, ctx.threadpool);
    if (s != xnn_status_success)
      return Internal(std::string("XNNPACK run failed: ") + XnnStatusName(s));
  }
  return Status::Ok();
}

std::shared_ptr<XnnOperator> Wrap(xnn_status s, const xnn_operator_t* op) {
  if (s != xnn_status_success || *op == nullptr) return nullptr;
  return std::make_shared<XnnOperator>(*op);
}

SharedOperator PackedOperator(
    ExecBuilder& b, const std::vector<std::string>& weights,
    const std::string& params, int64_t packed_bytes,
    const std::function<std::shared_ptr<XnnOperator>()>& create) {
  if (b.shared_weights() == nullptr) return {create(), false};
  std::string key = "xnnpack:" + params;
  for (const auto& w : weights) {
    const std::string* k = w.empty() ? nullptr : b.WeightKey(w);
    if (k == nullptr && !w.empty()) return {create(), false};
    key += "|" + (k ? *k : std::string("-"));
  }
  SharedWeights::Impl& s = b.shared_weights()->impl();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.xnn_ops.find(key);
  if (it != s.xnn_ops.end()) return {it->second, true};
  std::shared_ptr<XnnOperator> op = create();
  if (op) {
    s.xnn_ops[key] = op;
    s.bytes += packed_bytes;
  }
  return {op, false};
}

memory::desc NhwcDesc(const Shape& shape) {
  if (shape.size() != 4 || shape[1] == 1 || shape[2] * shape[3] == 1)
    return PlainDesc(shape);
  return memory::desc(memory::dims(shape.begin(), shape.end()),
                      memory::data_type::f32, memory::format_tag::nhwc);
}

bool IsNhwc(const memory::desc& md, const Shape& shape) {
  return md == NhwcDesc(shape);
}

int ActivationValue(ExecBuilder& b, const std::string& name) {
  if (name.empty() || b.Weight(name) != nullptr) return -1;
  return b.ValueOf(name);
}

const Node* FusedClamp(ExecBuilder& b, const std::string& tensor, float* lo,
                       float* hi) {
  *lo = kNoMin;
  *hi = kNoMax;
  const Node* act = b.SoleConsumer(tensor);
  if (act == nullptr || act->inputs.empty() || act->inputs[0] != tensor)
    return nullptr;
  if (act->op == "Relu") {
    *lo = 0.f;
    return act;
  }
  if (act->op == "Clip" && act->inputs.size() == 1) {
    const float mn = act->attrs.GetFloat("min", kNoMin);
    const float mx = act->attrs.GetFloat("max", kNoMax);
    if (!(mn < mx)) return nullptr;  // XNNPACK wants a non-empty range
    *lo = mn;
    *hi = mx;
    return act;
  }
  return nullptr;
}

void AddXnnOutputStep(ExecBuilder& b, const Node& n, const Node* act,
                      std::unique_ptr<XnnStep> step, const Shape& shape,
                      const memory::desc& md) {
  const std::string& out_name = act ? act->outputs[0] : n.outputs[0];
  const int y = b.NewValue(out_name, shape, md);
  step->AddOutput(y);
  step->label = act ? n.name + "+" + act->op : n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  if (act) {
    b.Define(act->outputs[0], y);
    b.MarkFused(act->name);
  }
}

XnnpackKernelRegistry& XnnpackKernelRegistry::Global() {
  static XnnpackKernelRegistry* r = new XnnpackKernelRegistry();
  return *r;
}

int XnnpackKernelRegistry::Register(const std::string& op, NodeBuilderFn fn) {
  if (!fns_.emplace(op, fn).second) {
    std::cerr << "XNNPACK kernel for '" << op << "' registered twice"
              << std::endl;
    std::abort();
  }
  return static_cast<int>(fns_.size());
}

NodeBuilderFn XnnpackKernelRegistry::Find(const std::string& op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : it->second;
}

std::vector<std::string> XnnpackKernelRegistry::Ops() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fns_) out.push_back(k);
  return out;
}

}  // namespace shoal
