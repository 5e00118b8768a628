#include "kernels/reference/reference_kernels.h"

#include <iostream>

namespace shoal {

RefKernelRegistry& RefKernelRegistry::Global() {
  static RefKernelRegistry* r = new RefKernelRegistry();
  return *r;
}

int RefKernelRegistry::Register(const std::string& op, RefKernelFn fn) {
  if (!kernels_.emplace(op, fn).second) {
    std::cerr << "reference kernel for '" << op << "' registered twice"
              << std::endl;
    std::abort();  // programmer error
  }
  return static_cast<int>(kernels_.size());
}

RefKernelFn RefKernelRegistry::Find(const std::string& op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<std::string> RefKernelRegistry::Ops() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : kernels_) out.push_back(k);
  return out;
}

}  // namespace shoal
