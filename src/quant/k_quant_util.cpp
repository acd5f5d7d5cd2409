#include "quant/k_quant_util.h"

#include <algorithm>
#include <cmath>

namespace hart::quant {

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights) {
  const float max = abs_max(x, n).max;
  if (std::fabs(max) < 1e-15f) {  // all zero
    std::fill(L, L + n, int8_t(0));
    return 0;
  }
  // Least-squares fit of x ~ scale*l for the levels that iscale produces.
  auto fit = [&](float iscale, float* sumlx, float* suml2) {
    *sumlx = *suml2 = 0;
    for (int i = 0; i < n; i++) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = weights ? weights[i] : x[i] * x[i];
      *sumlx += w * x[i] * float(l);
      *suml2 += w * float(l) * float(l);
    }
  };
  auto store = [&](float iscale) {
    for (int i = 0; i < n; i++)
      L[i] = int8_t(nmax + std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
  };
  float sumlx, suml2;
  float iscale = float(-nmax) / max;
  fit(iscale, &sumlx, &suml2);
  store(iscale);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; is++) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    fit(iscale, &sumlx, &suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      store(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* neg_min, float rmin, float rdelta, int nstep, bool abs_error) {
  float min = x[0], max = x[0];
  float sum_w = weights[0], sum_x = sum_w * x[0];
  for (int i = 1; i < n; i++) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t(0));
    *neg_min = -min;
    return 0;
  }
  auto error = [&](const uint8_t* levels, float scale, float offset) {
    float e = 0;
    for (int i = 0; i < n; i++) {
      const float diff = scale * float(levels[i]) + offset - x[i];
      e += weights[i] * (abs_error ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  for (int i = 0; i < n; i++)
    L[i] = uint8_t(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
  float best_error = error(L, scale, min);
  uint8_t aux[256];
  for (int is = 0; is <= nstep; is++) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; i++) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      aux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    const float e = error(aux, this_scale, this_min);
    if (e < best_error) {
      std::copy(aux, aux + n, L);
      best_error = e;
      scale = this_scale;
      min = this_min;
    }
  }
  *neg_min = -min;
  return scale;
}

float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* weights) {
  float max = 0;
  for (int i = 0; i < n; i++) max = std::max(max, x[i]);
  if (max < 1e-15f) {  // all zero
    std::fill(L, L + n, uint8_t(0));
    return 0;
  }
  // x may hold a negative value (IQ2_XXS's sign fold leaves one): its level is negative, except in
  // the first candidate's error, where ggml has it wrapped into a uint8 level already.
  auto mse = [&](float iscale, bool wrapped) {
    const float scale = 1 / iscale;
    float e = 0;
    for (int i = 0; i < n; i++) {
      const int l = nearest_int(iscale * x[i]);
      const float diff = x[i] - scale * float(wrapped ? int(uint8_t(l)) : std::min(nmax, l));
      e += weights[i] * diff * diff;
    }
    return e;
  };
  float iscale = float(nmax) / max;
  float best_mse = mse(iscale, true);
  for (int is = -4; is <= 4; is++) {
    if (is == 0) continue;
    const float iscale_is = (0.1f * float(is) + float(nmax)) / max;
    const float e = mse(iscale_is, false);
    if (e < best_mse) {
      best_mse = e;
      iscale = iscale_is;
    }
  }
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++) {
    const int l = std::min(nmax, nearest_int(iscale * x[i]));
    L[i] = uint8_t(l);
    sumlx += weights[i] * x[i] * float(l);
    suml2 += weights[i] * float(l) * float(l);
  }
  for (int pass = 0; pass < 5; pass++) {
    int changed = 0;
    for (int i = 0; i < n; i++) {
      const float w = weights[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      float sl2 = suml2 - w * float(L[i]) * float(L[i]);
      if (slx <= 0 || sl2 <= 0) continue;
      const int l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
      if (l == L[i]) continue;
      slx += w * x[i] * float(l);
      sl2 += w * float(l) * float(l);
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = uint8_t(l);
        sumlx = slx;
        suml2 = sl2;
        changed++;
      }
    }
    if (!changed) break;
  }
  return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

void get_scale_min_k4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Inverse of get_scale_min_k4; j must be visited in increasing order (j >= 4 adds high bits to
// bytes that j < 4 wrote).
static void set_scale_min_k4(int j, uint8_t* q, uint8_t scale, uint8_t min) {
  if (j < 4) {
    q[j] = scale;
    q[j + 4] = min;
  } else {
    q[j + 4] = uint8_t((scale & 0xF) | ((min & 0xF) << 4));
    q[j - 4] |= uint8_t((scale >> 4) << 6);
    q[j] |= uint8_t((min >> 4) << 6);
  }
}

// Both quantizers end alike: the 256 levels (0..nmax) recomputed with the rounded scales and mins,
// except in groups whose scale rounded to zero (ggml keeps the search's levels there).
static void recompute_levels(const float* x, int nmax, fp16_t d, fp16_t dmin, const uint8_t* scales, uint8_t* L) {
  for (int j = 0; j < 8; j++) {
    uint8_t sc, m;
    get_scale_min_k4(j, scales, &sc, &m);
    const float dj = fp16_to_f32(d) * float(sc);
    if (dj == 0) continue;
    const float mj = fp16_to_f32(dmin) * float(m);
    for (int i = 0; i < 32; i++)
      L[32 * j + i] = uint8_t(std::clamp(nearest_int((x[32 * j + i] + mj) / dj), 0, nmax));
  }
}

void quantize_scale_min_superblock(const float* x, const ScaleSearch& s, fp16_t* d, fp16_t* dmin,
                                   uint8_t* scales, uint8_t* L) {
  float sub_scale[8], sub_min[8], weights[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; j++) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; l++) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; l++) weights[l] = av_x + std::fabs(xs[l]);
    sub_scale[j] = make_qkx2_quants(32, s.nmax, xs, weights, L + 32 * j, &sub_min[j], s.rmin,
                                    s.rdelta, s.nstep);
    max_scale = std::max(max_scale, sub_scale[j]);
    max_min = std::max(max_min, sub_min[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; j++) {
    // ggml narrows to uint8 before capping at 63.
    const uint8_t ls = uint8_t(nearest_int(inv_scale * sub_scale[j]));
    const uint8_t lm = uint8_t(nearest_int(inv_min * sub_min[j]));
    set_scale_min_k4(j, scales, std::min<uint8_t>(63, ls), std::min<uint8_t>(63, lm));
  }
  *d = f32_to_fp16(max_scale / 63.f);
  *dmin = f32_to_fp16(max_min / 63.f);
  recompute_levels(x, s.nmax, *d, *dmin, scales, L);
}

void quantize_scale_min_superblock_weighted(const float* x, const float* importance, int nmax, fp16_t* d,
                                            fp16_t* dmin, uint8_t* scales, uint8_t* L) {
  float sum_x2 = 0;
  for (int l = 0; l < 256; l++) sum_x2 += x[l] * x[l];
  const float sigma2 = 2 * sum_x2 / 256;
  float sub_scale[8], sub_min[8], sw[8], weights[32];
  for (int j = 0; j < 8; j++) {
    const float* xs = x + 32 * j;
    for (int l = 0; l < 32; l++) weights[l] = importance[32 * j + l] * std::sqrt(sigma2 + xs[l] * xs[l]);
    sw[j] = 0;
    for (int l = 0; l < 32; l++) sw[j] += weights[l];
    sub_scale[j] = make_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &sub_min[j], -0.9f, 0.05f, 36);
  }
  // The 6-bit scales and mins are themselves a weighted least-squares fit (by each group's weight).
  uint8_t ls[8], lm[8];
  const float d_block = make_qp_quants(8, 63, sub_scale, ls, sw);
  const float m_block = make_qp_quants(8, 63, sub_min, lm, sw);
  for (int j = 0; j < 8; j++) set_scale_min_k4(j, scales, std::min<uint8_t>(63, ls[j]), std::min<uint8_t>(63, lm[j]));
  *d = f32_to_fp16(d_block);
  *dmin = f32_to_fp16(m_block);
  recompute_levels(x, nmax, *d, *dmin, scales, L);
}

void KQuantDot::add(const int8_t* w, const int8_t* a, const int* scale16, float d) {
  int32_t lane[8] = {};
  for (int e = 0; e < 256; e++) lane[e % 8] += scale16[e / 16] * (int(w[e]) * int(a[e]));
  for (int l = 0; l < 8; l++) lanes_[l] += d * float(lane[l]);
}

float KQuantDot::result() const {
  float s = rest_;
  for (float l : lanes_) s += l;
  return s;
}

int min_correction(const int16_t* bsums, const uint8_t* mins8) {
  int sum = 0;
  for (int g = 0; g < 16; g++) sum += int(bsums[g]) * int(mins8[g / 2]);
  return sum;
}

}  // namespace hart::quant
