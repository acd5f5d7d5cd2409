#include "quant/iq4_util.h"

#include <algorithm>
#include <cmath>

#include "quant/block32.h"
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

constexpr int kBlock = 32;
constexpr int kTries = 7;  // ggml_quantize_chunk's ntry for both types

// ggml's best_index_int8: the level nearest to x (the lower one on ties) by bisection.
int best_index(float x) {
  const int8_t* v = kIq4Levels;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (x < v[mid] ? hi : lo) = mid;
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// The best scale of one 32-weight block for weighted least squares (weights w): the levels for
// the scale that maps the value of largest magnitude onto -127, fitted, then 2*kTries+1 candidate
// scales around it. Writes the first candidate's levels to L (the caller recomputes them).
float block_scale(const float* x, const float* weight, uint8_t* L) {
  const float max = abs_max(x, kBlock).max;
  if (std::fabs(max) < 1e-15f) return 0;
  auto fit = [&](float id, float* sumqx, float* sumq2, uint8_t* levels) {
    *sumqx = *sumq2 = 0;
    for (int j = 0; j < kBlock; j++) {
      const int l = best_index(id * x[j]);
      if (levels) levels[j] = uint8_t(l);
      const float q = kIq4Levels[l], w = weight[j];
      *sumqx += w * q * x[j];
      *sumq2 += w * q * q;
    }
  };
  float sumqx, sumq2;
  fit(1 / (-max / float(kIq4Levels[0])), &sumqx, &sumq2, L);
  float d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int t = -kTries; t <= kTries; t++) {
    fit(float(t + kIq4Levels[0]) / max, &sumqx, &sumq2, nullptr);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

}  // namespace

void quantize_iq4(const float* x, int n, const float* importance, fp16_t* dh, uint8_t* qs, uint8_t* scales_l,
                  uint16_t* scales_h) {
  uint8_t L[256];
  float scales[256 / kBlock];
  const int nb = n / kBlock;
  // Without importance the weights are x^2; with it, importance * sqrt(sigma2 + x^2), sigma2
  // being twice the mean square of the n weights (ggml's quantize_row_iq4_nl_impl).
  float weight[256];
  float sigma2 = 0;
  for (int j = 0; j < n; j++) sigma2 += x[j] * x[j];
  sigma2 *= 2.f / float(n);
  for (int j = 0; j < n; j++) weight[j] = importance ? importance[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
  for (int ib = 0; ib < nb; ib++) scales[ib] = block_scale(x + kBlock * ib, weight + kBlock * ib, L + kBlock * ib);
  const float max_scale = abs_max(scales, nb).max;
  if (nb == 1) {
    *dh = f32_to_fp16(scales[0]);
    const float id = scales[0] != 0 ? 1 / scales[0] : 0.f;
    for (int j = 0; j < n; j++) L[j] = uint8_t(best_index(id * x[j]));
  } else {
    // Sub-scales in units of d = max_scale / -32; the levels follow the rounded sub-scale (the
    // unrounded d, as ggml has it).
    const float d = -max_scale / 32;
    *dh = f32_to_fp16(d);
    const float id = d != 0 ? 1 / d : 0.f;
    *scales_h = 0;
    for (int ib = 0; ib < nb; ib++) {
      const int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * float(l), idl = dl != 0 ? 1 / dl : 0.f;
      for (int j = 0; j < kBlock; j++) L[kBlock * ib + j] = uint8_t(best_index(idl * x[kBlock * ib + j]));
      const int biased = l + 32;
      if (ib % 2 == 0) scales_l[ib / 2] = uint8_t(biased & 0xF);
      else scales_l[ib / 2] |= uint8_t((biased & 0xF) << 4);
      *scales_h = uint16_t(*scales_h | ((biased >> 4) << (2 * (ib % 8))));
    }
  }
  for (int ib = 0; ib < nb; ib++) pack_nibbles(L + kBlock * ib, qs + 16 * ib);
}

}  // namespace hart::quant
