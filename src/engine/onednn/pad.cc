// Constant Pad: the output filled with the pad value, then the input copied
// into its interior by one oneDNN reorder (into a strided view of the
// output: the input's extents, the output's strides, an offset to the
// first interior element). The input may be in a blocked layout. Negative
// pads (crops) and the reflect and edge modes are the reference kernel's.
#include <algorithm>

#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

class PadStep : public Step {
 public:
  PadStep(dnnl::engine* eng, const memory::desc& src,
          const memory::desc& interior, int64_t out_elements, float value)
      : eng_(eng),
        src_md_(src),
        interior_md_(interior),
        out_elements_(out_elements),
        value_(value) {
    prim_ = dnnl::reorder(dnnl::reorder::primitive_desc(
        *eng_, src_md_, *eng_, interior_md_, ScratchpadAttr()));
    scratchpad_md_ = ScratchpadDesc(prim_);
  }
  Status Bind(const std::vector<void*>& ptrs) override {
    out_ = static_cast<float*>(ptrs[writes[0]]);
    args_[DNNL_ARG_FROM] = memory(src_md_, *eng_, ptrs[reads[0]]);
    args_[DNNL_ARG_TO] = memory(interior_md_, *eng_, out_);
    return Status::Ok();
  }
  Status Run(RunContext& ctx) override {
    std::fill(out_, out_ + out_elements_, value_);
    try {
      prim_.execute(*ctx.stream, args_);
    } catch (const dnnl::error& e) {
      return Internal(std::string("oneDNN execution failed: ") + e.what());
    }
    return Status::Ok();
  }
  int64_t scratchpad_bytes() const override {
    return static_cast<int64_t>(scratchpad_md_.get_size());
  }
  void BindScratchpad(void* buffer) override {
    if (scratchpad_bytes() > 0)
      args_[DNNL_ARG_SCRATCHPAD] = memory(scratchpad_md_, *eng_, buffer);
  }

 private:
  dnnl::engine* eng_;
  memory::desc src_md_, interior_md_, scratchpad_md_;
  int64_t out_elements_;
  float value_;
  float* out_ = nullptr;
  dnnl::reorder prim_;
  std::unordered_map<int, memory> args_;
};

StatusOr<bool> BuildPad(ExecBuilder& b, const Node& n) {
  if (n.attrs.GetString("mode", "constant") != "constant") return false;
  const int x = b.ValueOf(n.inputs[0]);
  if (x < 0) return false;
  const Value xv = b.value(x);
  const int64_t r = static_cast<int64_t>(xv.shape.size());
  const std::vector<int64_t> pads = n.attrs.GetInts("pads");
  if (r == 0 || static_cast<int64_t>(pads.size()) != 2 * r) return false;
  for (int64_t p : pads)
    if (p < 0) return false;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const memory::desc dst = PlainDesc(ys);
  memory::dims strides(r, 1);
  for (int64_t d = r - 2; d >= 0; --d) strides[d] = strides[d + 1] * ys[d + 1];
  int64_t offset = 0;
  for (int64_t d = 0; d < r; ++d) offset += pads[d] * strides[d];
  memory::desc interior(memory::dims(xv.shape.begin(), xv.shape.end()),
                        memory::data_type::f32, strides);
  interior.data.offset0 = offset;
  std::unique_ptr<PadStep> step;
  try {
    step =
        std::make_unique<PadStep>(&b.engine(), xv.md, interior, NumElements(ys),
                                  n.attrs.GetFloat("value", 0.f));
  } catch (const dnnl::error&) {
    return false;
  }
  step->reads = {x};
  const int y = b.NewValue(n.outputs[0], ys, dst);
  step->writes = {y};
  step->label = n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Pad", BuildPad);

}  // namespace
}  // namespace shoal
