// Q3_K: super-blocks of 256 weights in 16 groups of 16. A weight is d*(scale_g - 32)*level with
// 3-bit levels -4..3 (Q2_K's 2-bit layout plus a high bit in hmask) and 6-bit group scales packed
// in 12 bytes, under one fp16 super-scale d.
#include <algorithm>
#include <cmath>

#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

// Group scale j (0..63, 32 meaning 0): its low 4 bits are nibble j/8 of scales[j % 8], its high 2
// bits are bits 2(j/4)..2(j/4)+1 of scales[8 + j % 4].
int scale6(const uint8_t* s, int j) {
  const int low = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
  return low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

// The high bit of weight e is bit e/32 of hmask[e % 32]; a clear bit means level - 4.
void levels(const block_q3_K& b, int8_t* q) {
  unpack_k_crumbs(b.qs, q);
  for (int e = 0; e < QK_K; e++)
    if (!((b.hmask[e % 32] >> (e / 32)) & 1)) q[e] = int8_t(q[e] - 4);
}

void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<block_q3_K, QK_K>(src, dst, n, [](const block_q3_K& b, float* y) {
    int8_t q[QK_K];
    levels(b, q);
    const float d = fp16_to_f32(b.d);
    for (int g = 0; g < 16; g++) {
      const float dl = d * float(scale6(b.scales, g) - 32);
      for (int l = 0; l < 16; l++) y[16 * g + l] = dl * float(q[16 * g + l]);
    }
  });
}

// ggml's make_q3_quants with rmse: symmetric levels -nmax..nmax-1 (stored in L offset by nmax)
// for the scale nmax/max, then up to 5 passes that move single levels where that improves the
// x^2-weighted least-squares fit. Returns the fitted scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  const float max = abs_max(x, n).max;
  if (std::fabs(max) < 1e-15f) {  // all zero
    std::fill(L, L + n, int8_t(0));
    return 0;
  }
  const float iscale = float(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int pass = 0; pass < 5; pass++) {
    int changed = 0;
    for (int i = 0; i < n; i++) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx <= 0) continue;
      float sl2 = suml2 - w * float(L[i]) * float(L[i]);
      const int l = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == L[i]) continue;
      slx += w * x[i] * float(l);
      sl2 += w * float(l) * float(l);
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = int8_t(l);
        sumlx = slx;
        suml2 = sl2;
        changed++;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; i++) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

// The first step of ggml's quantizers: a scale per 16 weights with their levels in L, and those
// scales as 6-bit levels (+32) under the super-scale. quantize_row_q3_K_ref: make_q3_quants scales,
// quantized against d = max_scale / -32. quantize_row_q3_K_impl (importance given): make_qx_quants
// scales weighted by importance*sqrt(sigma2+x^2), and their levels a make_qx_quants fit weighted
// by each group's total weight.
float group_scales(const float* x, const float* importance, int8_t* L, int* levels) {
  float scales[16];
  if (!importance) {
    for (int g = 0; g < 16; g++) scales[g] = make_q3_quants(16, 4, x + 16 * g, L + 16 * g);
    const float max_scale = abs_max(scales, 16).max;
    if (max_scale == 0) {
      std::fill(levels, levels + 16, 0);  // ggml leaves the scale bytes zero (and d = 0)
      return 0;
    }
    const float iscale = -32.f / max_scale;
    for (int g = 0; g < 16; g++) levels[g] = std::clamp(int(int8_t(nearest_int(iscale * scales[g]))), -32, 31) + 32;
    return 1 / iscale;
  }
  float sumx2 = 0;
  for (int i = 0; i < QK_K; i++) sumx2 += x[i] * x[i];
  const float sigma2 = 2 * sumx2 / QK_K;
  float weight[16], sw[16];
  for (int g = 0; g < 16; g++) {
    sw[g] = 0;
    for (int l = 0; l < 16; l++) {
      weight[l] = importance[16 * g + l] * std::sqrt(sigma2 + x[16 * g + l] * x[16 * g + l]);
      sw[g] += weight[l];
    }
    scales[g] = make_qx_quants(16, 4, x + 16 * g, L + 16 * g, weight);
  }
  int8_t ls[16];
  const float d = make_qx_quants(16, 32, scales, ls, sw);
  for (int g = 0; g < 16; g++) levels[g] = ls[g];
  return d;
}

// Then the levels recomputed with the rounded scales and packed (2 low bits, the high bit in hmask).
void quantize_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  auto* blocks = static_cast<block_q3_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; i++) {
    const float* x = src + QK_K * i;
    block_q3_K& b = blocks[i];
    int8_t L[QK_K];
    int levels[16];
    b.d = f32_to_fp16(group_scales(x, importance ? importance + QK_K * i : nullptr, L, levels));
    std::memset(b.scales, 0, sizeof(b.scales));
    for (int g = 0; g < 16; g++) {
      b.scales[g % 8] |= uint8_t((levels[g] & 0xF) << (4 * (g / 8)));
      b.scales[8 + g % 4] |= uint8_t((levels[g] >> 4) << (2 * (g / 4)));
    }
    for (int g = 0; g < 16; g++) {
      const float d = fp16_to_f32(b.d) * float(scale6(b.scales, g) - 32);
      if (d == 0) continue;  // keep the search's levels, as ggml does
      for (int j = 0; j < 16; j++) L[16 * g + j] = int8_t(std::clamp(nearest_int(x[16 * g + j] / d), -4, 3) + 4);
    }
    std::memset(b.hmask, 0, sizeof(b.hmask));
    uint8_t low[QK_K];
    for (int e = 0; e < QK_K; e++) {
      if (L[e] > 3) b.hmask[e % 32] |= uint8_t(1 << (e / 32));
      low[e] = uint8_t(L[e] & 3);
    }
    pack_k_crumbs(low, b.qs);
  }
}

void quantize(const float* src, void* dst, int64_t n) { quantize_weighted(src, dst, n, nullptr); }

float scales(const block_q3_K& w, const block_q8_K&, int* scale16) {
  for (int g = 0; g < 16; g++) scale16[g] = scale6(w.scales, g) - 32;
  return 0;  // no minimum
}

}  // namespace

Codec codec_q3_k() {
  return {.dequantize = dequantize,
          .quantize = quantize,
          .quantize_weighted = quantize_weighted,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q3_K, levels, scales>};
}

}  // namespace hart::quant
