// Q8_K: the activation type of the K-quant dot products. 256 int8 levels, a float scale, and the
// sum of each 16 levels (bsums) so the K-quant minimum corrections cost one multiply per group.
#include <algorithm>
#include <cmath>

#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<block_q8_K, QK_K>(src, dst, n, [](const block_q8_K& b, float* y) {
    for (int e = 0; e < QK_K; e++) y[e] = b.d * float(b.qs[e]);
  });
}

// ggml's quantize_row_q8_K_ref: the value of largest magnitude maps to level -127 (not -128, which
// some SIMD kernels cannot negate).
void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q8_K, QK_K>(src, dst, n, [](const float* x, block_q8_K& b) {
    float max = 0, amax = 0;
    for (int e = 0; e < QK_K; e++)
      if (std::fabs(x[e]) > amax) amax = std::fabs(x[e]), max = x[e];
    if (amax == 0) {
      std::memset(&b, 0, sizeof(b));
      return;
    }
    const float iscale = -127.f / max;
    for (int e = 0; e < QK_K; e++) b.qs[e] = int8_t(std::min(127, nearest_int(iscale * x[e])));
    for (int g = 0; g < 16; g++) {
      int sum = 0;
      for (int i = 0; i < 16; i++) sum += b.qs[16 * g + i];
      b.bsums[g] = int16_t(sum);
    }
    b.d = 1 / iscale;
  });
}

}  // namespace

// Q8_K exists for activations only: ggml gives it no dot product of its own.
Codec codec_q8_k() {
  return {
      .dequantize = dequantize, .quantize = quantize, .dot_type = Type::Q8_K, .vec_dot = nullptr};
}

}  // namespace hart::quant
