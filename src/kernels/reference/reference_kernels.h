// The reference backend: plain loops over plain row-major tensors, one
// kernel per op. It is the oracle the oneDNN backend is tested against and
// the fallback for ops oneDNN has no primitive for. Clarity over speed.
#ifndef SHOAL_KERNELS_REFERENCE_REFERENCE_KERNELS_H_
#define SHOAL_KERNELS_REFERENCE_REFERENCE_KERNELS_H_

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kernels/tensor_view.h"
#include "util/status.h"

namespace shoal {

// Inputs in node input order (weights included; absent optional inputs have
// data == nullptr); outputs pre-allocated with their inferred shapes.
using RefKernelFn = Status (*)(const Node& node,
                               const std::vector<ConstView>& in,
                               const std::vector<MutView>& out);

class RefKernelRegistry {
 public:
  static RefKernelRegistry& Global();
  int Register(const std::string& op, RefKernelFn fn);
  RefKernelFn Find(const std::string& op) const;
  std::vector<std::string> Ops() const;

 private:
  std::map<std::string, RefKernelFn> kernels_;
};

#define SHOAL_REGISTER_REF_KERNEL(op, fn)                                    \
  static int SHOAL_CONCAT(shoal_ref_kernel_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::RefKernelRegistry::Global().Register(op, fn)

}  // namespace shoal

#endif  // SHOAL_KERNELS_REFERENCE_REFERENCE_KERNELS_H_
