// Q2_0: blocks of 64 weights at 2 bits each (weight j in bits 2(j%4).. of byte j/4), a stored
// value v standing for level v - 1 (-1, 0, 1, 2), under one fp16 scale d, the block's largest
// magnitude.
#include <algorithm>
#include <cmath>

#include "quant/q8_0_groups.h"

namespace hart::quant {
namespace {

void levels(const block_q2_0& b, int8_t* q) {
  for (int j = 0; j < QK2_0; j++) q[j] = int8_t(((b.qs[j / 4] >> (2 * (j % 4))) & 3) - 1);
}

// ggml's quantize_row_q2_0_ref: level = round(x / amax) (half away from zero), clamped to -1..2,
// with the float amax (not its fp16 rounding) as the divisor.
void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q2_0, QK2_0>(src, dst, n, [](const float* x, block_q2_0& b) {
    float amax = 0;
    for (int j = 0; j < QK2_0; j++) amax = std::max(amax, std::fabs(x[j]));
    const float id = amax > 0 ? 1.0f / amax : 0.0f;
    b.d = f32_to_fp16(amax);
    for (uint8_t& byte : b.qs) byte = 0;
    for (int j = 0; j < QK2_0; j++) {
      const int v = std::clamp(int(std::round(x[j] * id)) + 1, 0, 3);
      b.qs[j / 4] = uint8_t(b.qs[j / 4] | (v << (2 * (j % 4))));
    }
  });
}

}  // namespace

Codec codec_q2_0() {
  return {.dequantize = dequantize_groups<block_q2_0, QK2_0, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_groups<block_q2_0, QK2_0, levels>};
}

}  // namespace hart::quant
