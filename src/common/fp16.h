// IEEE half and bfloat16 conversions with ggml's rounding, so that converted values are
// bit-identical to what ggml produces (round to nearest even; NaN stays NaN).
#pragma once

#include <cstdint>
#include <cstring>

namespace hart {

using fp16_t = uint16_t;
using bf16_t = uint16_t;

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float fp16_to_f32(fp16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp != 0) return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return bits_f32(sign);
  // Subnormal half: value = man * 2^-24, exact in float.
  const float v = float(man) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

// Round-to-nearest-even float -> half, overflow to inf, NaN kept quiet.
inline fp16_t f32_to_fp16(float f) {
  const uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return fp16_t(sign | 0x7e00 | ((ax >> 13) & 0x3ff));  // NaN
  if (ax >= 0x477ff000u) return fp16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {                                // below the smallest normal half
    if (ax < 0x33000000u) return fp16_t(sign);           // < 2^-25: rounds to zero
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return fp16_t(sign | h);
  }
  uint32_t h = ((ax >> 13) - (112u << 10));
  const uint32_t rem = ax & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return fp16_t(sign | h);
}

inline float bf16_to_f32(bf16_t h) { return bits_f32(uint32_t(h) << 16); }

// ggml_compute_fp32_to_bf16: NaN forced quiet, otherwise round to nearest even.
inline bf16_t f32_to_bf16(float f) {
  const uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16_t((u >> 16) | 64);
  return bf16_t((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

}  // namespace hart
