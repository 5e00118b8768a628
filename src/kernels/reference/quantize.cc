// QuantizeLinear and DequantizeLinear (graph/quantization.h).
#include "graph/quantization.h"
#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

Status Quant(const Node& node, const std::vector<ConstView>& in,
             const std::vector<MutView>& out, bool quantize) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  ASSIGN_OR_RETURN(QuantParams p, ReadQuantParams(node, in[0].shape));
  ApplyQuant(p, in[0].shape, quantize, in[0].data, out[0].data);
  return Status::Ok();
}

Status QuantizeKernel(const Node& node, const std::vector<ConstView>& in,
                      const std::vector<MutView>& out) {
  return Quant(node, in, out, true);
}

Status DequantizeKernel(const Node& node, const std::vector<ConstView>& in,
                        const std::vector<MutView>& out) {
  return Quant(node, in, out, false);
}

SHOAL_REGISTER_REF_KERNEL("QuantizeLinear", QuantizeKernel);
SHOAL_REGISTER_REF_KERNEL("DequantizeLinear", DequantizeKernel);

}  // namespace
}  // namespace shoal
