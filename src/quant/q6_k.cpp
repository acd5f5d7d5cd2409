// Q6_K: super-blocks of 256 weights in 16 groups of 16. A weight is d*scale_g*level with 6-bit
// levels -32..31, an int8 scale per group and an fp16 super-scale d.
#include <algorithm>
#include <cmath>

#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

// Each 128-weight half h uses 64 bytes of ql (low 4 bits) and 32 of qh (high 2 bits): weight
// l + 32k (k = 0..3) takes nibble k/2 of ql[l + 32*(k%2)] and bits 2k..2k+1 of qh[l].
void levels(const block_q6_K& b, int8_t* q) {
  for (int h = 0; h < 2; h++) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; l++) {
      for (int k = 0; k < 4; k++) {
        const int low = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
        const int high = (qh[l] >> (2 * k)) & 3;
        q[128 * h + 32 * k + l] = int8_t((low | (high << 4)) - 32);
      }
    }
  }
}

void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<block_q6_K, QK_K>(src, dst, n, [](const block_q6_K& b, float* y) {
    int8_t q[QK_K];
    levels(b, q);
    const float d = fp16_to_f32(b.d);
    for (int e = 0; e < QK_K; e++) y[e] = d * float(b.scales[e / 16]) * float(q[e]);
  });
}

// ggml's quantize_row_q6_K_ref (and _impl, whose least-squares weights are the importance values
// themselves): a make_qx_quants scale per 16 weights, those scales quantized to int8 against
// d = max_scale / -128, then the levels recomputed with the rounded scales.
void quantize_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  auto* blocks = static_cast<block_q6_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; i++) {
    const float* x = src + QK_K * i;
    const float* qw = importance ? importance + QK_K * i : nullptr;
    block_q6_K& b = blocks[i];
    int8_t L[QK_K];
    float scales[16];
    for (int g = 0; g < 16; g++) scales[g] = make_qx_quants(16, 32, x + 16 * g, L + 16 * g, qw ? qw + 16 * g : nullptr);
    const float max_scale = abs_max(scales, 16).max;
    if (std::fabs(max_scale) < 1e-15f) {
      std::memset(&b, 0, sizeof(b));
      continue;
    }
    const float iscale = -128.f / max_scale;
    b.d = f32_to_fp16(1 / iscale);
    for (int g = 0; g < 16; g++)
      b.scales[g] = int8_t(std::min(127, nearest_int(iscale * scales[g])));
    for (int g = 0; g < 16; g++) {
      const float d = fp16_to_f32(b.d) * float(b.scales[g]);
      if (d == 0) continue;  // keep the search's levels, as ggml does
      for (int i = 0; i < 16; i++)
        L[16 * g + i] = int8_t(std::clamp(nearest_int(x[16 * g + i] / d), -32, 31) + 32);
    }
    for (int h = 0; h < 2; h++) {
      uint8_t* ql = b.ql + 64 * h;
      uint8_t* qh = b.qh + 32 * h;
      const int8_t* Lh = L + 128 * h;
      for (int l = 0; l < 32; l++) {
        ql[l] = uint8_t((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
        ql[l + 32] = uint8_t((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
        qh[l] = uint8_t((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                        ((Lh[l + 96] >> 4) << 6));
      }
    }
  }
}

void quantize(const float* src, void* dst, int64_t n) { quantize_weighted(src, dst, n, nullptr); }

float scales(const block_q6_K& w, const block_q8_K&, int* scale16) {
  for (int g = 0; g < 16; g++) scale16[g] = w.scales[g];
  return 0;  // no minimum
}

}  // namespace

Codec codec_q6_k() {
  return {.dequantize = dequantize,
          .quantize = quantize,
          .quantize_weighted = quantize_weighted,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q6_K, levels, scales>};
}

}  // namespace hart::quant
