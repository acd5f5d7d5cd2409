// Q8_0 (weights and activations) and Q8_1 (activations of Q4_1 / Q5_1): blocks of 32 int8
// levels times an fp16 scale; Q8_1 also stores s = d * sum(levels) for the partner's minimum.
#include <algorithm>
#include <cmath>

#include "quant/block32.h"

namespace hart::quant {
namespace {

template <class Block>
void levels(const Block& b, int8_t* q) {
  std::memcpy(q, b.qs, QK32);
}

// roundf (half away from zero) for |v| < 2^23 without a libm call: v - trunc(v) is exact.
inline int round_half_away(float v) {
  const int i = int(v);
  const float frac = v - float(i);
  return frac >= 0.5f ? i + 1 : frac <= -0.5f ? i - 1 : i;
}

// Symmetric 8-bit: d = amax / 127, levels rounded half away from zero. Returns the float d.
float quantize_block(const float* x, int8_t* qs) {
  float amax = 0;
  for (int j = 0; j < QK32; j++) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK32; j++) qs[j] = int8_t(round_half_away(x[j] * id));
  return d;
}

void quantize_q8_0(const float* src, void* dst, int64_t n) {
  for_each_block<block_q8_0, QK32>(src, dst, n, [](const float* x, block_q8_0& b) {
    b.d = f32_to_fp16(quantize_block(x, b.qs));
  });
}

void quantize_q8_1(const float* src, void* dst, int64_t n) {
  for_each_block<block_q8_1, QK32>(src, dst, n, [](const float* x, block_q8_1& b) {
    const float d = quantize_block(x, b.qs);
    int sum = 0;
    for (int j = 0; j < QK32; j++) sum += b.qs[j];
    b.d = f32_to_fp16(d);
    b.s = f32_to_fp16(float(sum) * d);
  });
}

}  // namespace

Codec codec_q8_0() {
  return {.dequantize = dequantize_levels<block_q8_0, levels<block_q8_0>>,
          .quantize = quantize_q8_0,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_q8_0, block_q8_0, levels<block_q8_0>>};
}

// Q8_1 exists for activations only: ggml gives it no dot product of its own.
Codec codec_q8_1() {
  return {.dequantize = dequantize_levels<block_q8_1, levels<block_q8_1>>,
          .quantize = quantize_q8_1,
          .dot_type = Type::Q8_1,
          .vec_dot = nullptr};
}

}  // namespace hart::quant
