// Q2_K: super-blocks of 256 weights in 16 groups of 16. A weight is d*scale_g*level - dmin*min_g
// with 2-bit levels and a 4-bit scale and min per group (low and high nibble of scales[g]) under
// fp16 super-scales d and dmin.
#include <algorithm>
#include <cmath>

#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<block_q2_K, QK_K>(src, dst, n, [](const block_q2_K& b, float* y) {
    int8_t q[QK_K];
    unpack_k_crumbs(b.qs, q);
    const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
    for (int g = 0; g < 16; g++) {
      const float dl = d * float(b.scales[g] & 0xF), ml = dmin * float(b.scales[g] >> 4);
      for (int l = 0; l < 16; l++) y[16 * g + l] = dl * float(q[16 * g + l]) - ml;
    }
  });
}

// ggml's quantize_row_q2_K_ref: a (scale, min) per 16 weights from make_qkx2_quants weighted by
// |x| with absolute error, both quantized to 4 bits against d = max_scale/15, dmin = max_min/15,
// then the levels recomputed with the rounded scales.
void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q2_K, QK_K>(src, dst, n, [](const float* x, block_q2_K& b) {
    uint8_t L[QK_K];
    float scales[16], mins[16], weights[16];
    float max_scale = 0, max_min = 0;
    for (int g = 0; g < 16; g++) {
      for (int l = 0; l < 16; l++) weights[l] = std::fabs(x[16 * g + l]);
      scales[g] = make_qkx2_quants(16, 3, x + 16 * g, weights, L + 16 * g, &mins[g], -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[g]);
      max_min = std::max(max_min, mins[g]);
    }
    // Both maxima are >= 0 (the minimum is subtracted); nearest_int of at most 15 needs no clamp.
    const float iscale = max_scale > 0 ? 15.f / max_scale : 0.f, imin = max_min > 0 ? 15.f / max_min : 0.f;
    for (int g = 0; g < 16; g++)
      b.scales[g] = uint8_t(nearest_int(iscale * scales[g]) | (nearest_int(imin * mins[g]) << 4));
    b.d = f32_to_fp16(max_scale > 0 ? max_scale / 15.f : 0.f);
    b.dmin = f32_to_fp16(max_min > 0 ? max_min / 15.f : 0.f);
    for (int g = 0; g < 16; g++) {
      const float d = fp16_to_f32(b.d) * float(b.scales[g] & 0xF);
      if (d == 0) continue;  // keep the search's levels, as ggml does
      const float dm = fp16_to_f32(b.dmin) * float(b.scales[g] >> 4);
      for (int i = 0; i < 16; i++) L[16 * g + i] = uint8_t(std::clamp(nearest_int((x[16 * g + i] + dm) / d), 0, 3));
    }
    pack_k_crumbs(L, b.qs);
  });
}

// ggml's generic order: one integer sum per super-block (scale * level * activation), minus the
// integer min correction, each scaled once in float.
void vec_dot(int64_t n, float* out, const void* w, const void* x) {
  const auto* wb = static_cast<const block_q2_K*>(w);
  const auto* xb = static_cast<const block_q8_K*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; i++) {
    int8_t q[QK_K];
    unpack_k_crumbs(wb[i].qs, q);
    int isum = 0, summs = 0;
    for (int g = 0; g < 16; g++) {
      int gsum = 0;
      for (int l = 0; l < 16; l++) gsum += int(q[16 * g + l]) * int(xb[i].qs[16 * g + l]);
      isum += (wb[i].scales[g] & 0xF) * gsum;
      summs += xb[i].bsums[g] * (wb[i].scales[g] >> 4);
    }
    const float dall = xb[i].d * fp16_to_f32(wb[i].d), dmin = xb[i].d * fp16_to_f32(wb[i].dmin);
    sum += dall * float(isum) - dmin * float(summs);
  }
  *out = sum;
}

}  // namespace

Codec codec_q2_k() {
  return {.dequantize = dequantize, .quantize = quantize, .dot_type = Type::Q8_K, .vec_dot = vec_dot};
}

}  // namespace hart::quant
