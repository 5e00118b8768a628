// How oneDNN computes a quantized layer (engine/onednn/int8_pattern.h).
//
// oneDNN's int8 convolutions, inner products and matmuls on x86 without
// VNNI (AVX2, and AVX-512 before Cascade Lake) multiply u8 x s8 pairs with
// vpmaddubsw, whose 16-bit sum of two products saturates: oneDNN expects
// 7-bit inputs there, and full-range ones give wrong answers (-1.690 for
// an exact -1.861). With VNNI (vpdpbusd sums in 32 bits) and on every
// other architecture (arm64 runs oneDNN's reference int8 kernels, or SVE's
// sdot) the s32 sums are exact. Where they are not, the same layer runs on
// oneDNN's f32 kernels over the same integer values: every product of two
// int8 values is exact in f32, the sums round as an f32 layer's do
// (relative 1e-7, where saturation was off by 10 %), and the scales are
// applied after them as on the int8 path.
#ifndef SHOAL_ENGINE_INT8_PATH_H_
#define SHOAL_ENGINE_INT8_PATH_H_

namespace shoal {

enum class Int8Path {
  kAuto,            // options only: kInt8Primitives where they sum exactly
  kInt8Primitives,  // u8 / s8 data, s8 weights, s32 sums
  kF32Sums,         // the integer values in f32 (f32 weights: 4x the bytes)
};

// "int8 primitives" or "f32 sums" ("none" for kAuto).
const char* Int8PathName(Int8Path p);

// The path kAuto takes here: kInt8Primitives unless this is x86 whose ISA,
// as oneDNN will use it (ONEDNN_MAX_CPU_ISA lowers it), has no VNNI.
Int8Path Int8PathOnThisCpu();

// Why: "VNNI", "no VNNI: int8 sums saturate", "not x86".
const char* Int8PathReason();

// kAuto resolved to this CPU's path; the others as they are.
Int8Path ResolveInt8Path(Int8Path p);

}  // namespace shoal

#endif  // SHOAL_ENGINE_INT8_PATH_H_
