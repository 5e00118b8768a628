// The XNNPACK backend's layout changes, NCHW <-> NHWC, as a blocked
// transpose on XNNPACK's own thread pool. oneDNN's reorders would run on
// OpenMP's threads: two pools spinning for the same cores between steps,
// which on a loaded board (or a 2-core CI machine) costs more than the
// copy. This XNNPACK (2022) has no transpose operator of its own.
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

// Pixels per task: a block's rows of every channel stay in cache while
// they are written.
constexpr size_t kBlock = 64;

struct Transpose {
  const float* src;
  float* dst;
  size_t c, hw, blocks;
  bool to_nhwc;
};

void TransposeBlock(void* arg, size_t task) {
  const Transpose& t = *static_cast<const Transpose*>(arg);
  const size_t n = task / t.blocks, p0 = (task % t.blocks) * kBlock;
  const size_t p1 = std::min(p0 + kBlock, t.hw);
  const float* src = t.src + n * t.c * t.hw;
  float* dst = t.dst + n * t.c * t.hw;
  if (t.to_nhwc) {
    for (size_t p = p0; p < p1; ++p)
      for (size_t k = 0; k < t.c; ++k) dst[p * t.c + k] = src[k * t.hw + p];
  } else {
    for (size_t k = 0; k < t.c; ++k)
      for (size_t p = p0; p < p1; ++p) dst[k * t.hw + p] = src[p * t.c + k];
  }
}

class NhwcTransposeStep : public Step {
 public:
  NhwcTransposeStep(const Shape& s, bool to_nhwc)
      : n_(s[0]), c_(s[1]), hw_(s[2] * s[3]), to_nhwc_(to_nhwc) {
    xnnpack = true;
  }
  Status Bind(const std::vector<void*>& ptrs) override {
    src_ = static_cast<const float*>(ptrs[reads[0]]);
    dst_ = static_cast<float*>(ptrs[writes[0]]);
    return Status::Ok();
  }
  Status Run(RunContext& ctx) override {
    Transpose t{src_, dst_, c_, hw_, (hw_ + kBlock - 1) / kBlock, to_nhwc_};
    pthreadpool_parallelize_1d(ctx.threadpool, TransposeBlock, &t,
                               n_ * t.blocks, /*flags=*/0);
    return Status::Ok();
  }

 private:
  size_t n_, c_, hw_;
  bool to_nhwc_;
  const float* src_ = nullptr;
  float* dst_ = nullptr;
};

}  // namespace

std::unique_ptr<Step> NhwcTransposeStepFor(const Value& src,
                                           const memory::desc& dst) {
  const Shape& s = src.shape;
  if (s.size() != 4) return nullptr;
  const bool to_nhwc = IsPlain(src.md, s) && IsNhwc(dst, s);
  const bool to_plain = IsNhwc(src.md, s) && IsPlain(dst, s);
  if (to_nhwc == to_plain) return nullptr;  // neither (or the same bytes)
  return std::make_unique<NhwcTransposeStep>(s, to_nhwc);
}

}  // namespace shoal
