// IQ4_XS: super-blocks of 256 weights in 8 blocks of 32 with IQ4_NL's non-linear 4-bit levels and
// packing; block b's scale is d*(s_b - 32) with 6-bit s_b (low nibble in scales_l[b/2], high 2
// bits in bits 2b..2b+1 of scales_h) under one fp16 super-scale d.
#include "quant/block32.h"
#include "quant/iq4_util.h"

namespace hart::quant {
namespace {

int sub_scale(const block_iq4_xs& b, int ib) {
  return ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
}

void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<block_iq4_xs, QK_K>(src, dst, n, [](const block_iq4_xs& b, float* y) {
    const float d = fp16_to_f32(b.d);
    for (int ib = 0; ib < QK_K / QK32; ib++) {
      int8_t q[QK32];
      iq4_levels(b.qs + 16 * ib, q);
      const float dl = d * float(sub_scale(b, ib) - 32);
      for (int j = 0; j < QK32; j++) y[QK32 * ib + j] = dl * float(q[j]);
    }
  });
}

// Importance weights for block i are importance[QK_K * i ..] (nullptr: none).
void quantize_blocks(const float* src, void* dst, int64_t n, const float* importance) {
  auto* b = static_cast<block_iq4_xs*>(dst);
  for (int64_t i = 0; i < n / QK_K; i++)
    quantize_iq4(src + QK_K * i, QK_K, importance ? importance + QK_K * i : nullptr, &b[i].d, b[i].qs, b[i].scales_l, &b[i].scales_h);
}

void quantize(const float* src, void* dst, int64_t n) { quantize_blocks(src, dst, n, nullptr); }

// ggml's generic order: each 32-weight block's integer sum scaled by d_w*d_x*(s_b - 32) in float.
void vec_dot(int64_t n, float* out, const void* w, const void* x) {
  const auto* wb = static_cast<const block_iq4_xs*>(w);
  const auto* xb = static_cast<const block_q8_K*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; i++) {
    const float d = fp16_to_f32(wb[i].d) * xb[i].d;
    for (int ib = 0; ib < QK_K / QK32; ib++) {
      int8_t q[QK32];
      iq4_levels(wb[i].qs + 16 * ib, q);
      int sumi = 0;
      for (int j = 0; j < QK32; j++) sumi += int(q[j]) * int(xb[i].qs[QK32 * ib + j]);
      sum += d * float(sub_scale(wb[i], ib) - 32) * float(sumi);
    }
  }
  *out = sum;
}

}  // namespace

Codec codec_iq4_xs() {
  return {.dequantize = dequantize, .quantize = quantize,
          .quantize_weighted = quantize_blocks, .dot_type = Type::Q8_K, .vec_dot = vec_dot};
}

}  // namespace hart::quant
