// libFuzzer target: bytes -> cluster file (YAML) -> validated Cluster.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = shoal::ParseCluster(text, "fuzz.yaml");
  if (c.ok()) (void)c->PlanDevices();
  return 0;
}
