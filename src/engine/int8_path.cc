#include "engine/int8_path.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace shoal {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// oneDNN's ISA values are bit sets: an ISA includes each one below it.
bool IsaHasVnni() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [isa](dnnl::cpu_isa want) {
    const auto w = static_cast<unsigned>(want);
    return (isa & w) == w;
  };
  return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
}
#endif

}  // namespace

const char* Int8PathName(Int8Path p) {
  switch (p) {
    case Int8Path::kInt8Primitives:
      return "int8 primitives";
    case Int8Path::kF32Sums:
      return "f32 sums";
    case Int8Path::kAuto:
      break;
  }
  return "none";
}

Int8Path Int8PathOnThisCpu() {
#if defined(__x86_64__) || defined(__i386__)
  static const Int8Path path =
      IsaHasVnni() ? Int8Path::kInt8Primitives : Int8Path::kF32Sums;
  return path;
#else
  return Int8Path::kInt8Primitives;
#endif
}

const char* Int8PathReason() {
#if defined(__x86_64__) || defined(__i386__)
  return Int8PathOnThisCpu() == Int8Path::kInt8Primitives
             ? "x86 with VNNI: exact s32 sums"
             : "x86 without VNNI: oneDNN's int8 sums would saturate";
#else
  return "not x86: exact s32 sums";
#endif
}

Int8Path ResolveInt8Path(Int8Path p) {
  return p == Int8Path::kAuto ? Int8PathOnThisCpu() : p;
}

}  // namespace shoal
