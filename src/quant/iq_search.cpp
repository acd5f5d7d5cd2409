// The search shared by IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S (ggml's
// quantize_row_iq2_xxs_impl, quantize_row_iq2_xs_impl, quantize_row_iq2_s_impl, quantize_row_iq3_xxs_impl and quantize_row_iq3_s_impl differ only in
// iq_quantize.h's parameters).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "quant/iq_quantize.h"
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

// An octet of x as magnitudes xval and its sign bits. With `even`, the number of negative weights
// is made even: when it is odd the weight of least importance w*x^2 (the first such) keeps the
// wrong sign, and the 7 stored bits are returned.
uint8_t fold_signs(const float* x, const float* w, bool even, float* xval) {
  int nflip = 0;
  uint8_t s = 0;
  for (int i = 0; i < 8; i++) {
    xval[i] = std::fabs(x[i]);
    if (x[i] < 0) {
      nflip++;
      s = uint8_t(s | (1 << i));
    }
  }
  if (!even) return s;
  if (nflip % 2) {
    int imin = 0;
    for (int i = 1; i < 8; i++)
      if (w[i] * x[i] * x[i] < w[imin] * x[imin] * x[imin]) imin = i;
    xval[imin] = -xval[imin];
    s = uint8_t(s ^ (1 << imin));
  }
  return uint8_t(s & 127);
}

// The weighted least-squares scale of levels L (values 2l+1) for xval: sumqx / sumq2.
struct Fit {
  float sumqx = 0, sumq2 = 0;
};
Fit fit(int n, const int8_t* L, const float* xval, const float* w) {
  Fit f;
  for (int i = 0; i < n; i++) {
    const float q = float(2 * L[i] + 1);
    f.sumqx += w[i] * xval[i] * q;
    f.sumq2 += w[i] * q * q;
  }
  return f;
}

// One block of s.block weights: returns its scale (>= 0) and writes the levels to L and each
// octet's sign bits to signs (all zero for a zero block, as ggml leaves its codes; level 0
// everywhere is entry 0 of every grid).
float search_block(const IqSearch& s, const float* x, const float* weight, int8_t* L, uint8_t* signs) {
  const IqGridSearch& g = s.grid();
  const int n = s.block, dims = g.dims(), groups = n / dims;
  float xval[32], waux[32];
  for (int i = 0; i < n; i++) waux[i] = std::sqrt(weight[i]);
  for (int o = 0; o < n / 8; o++) signs[o] = fold_signs(x + 8 * o, weight + 8 * o, s.even_signs, xval + 8 * o);
  float max = xval[0];
  for (int i = 1; i < n; i++) max = std::max(max, xval[i]);
  auto zero = [&] {
    std::memset(L, 0, size_t(n));
    std::memset(signs, 0, size_t(n / 8));
    return 0.f;
  };
  std::memset(L, 0, size_t(n));
  if (max < s.eps) return zero();

  float scale = max / float(2 * s.kmax - 1), denominator = max;
  if (s.qp_start) {
    uint8_t qp[32];
    scale = make_qp_quants(n, s.kmax + 1, xval, qp, weight);
    std::copy(qp, qp + n, L);
    denominator = scale * float(s.kmax);
    if (denominator <= 0) return zero();
  }
  auto round_levels = [&](float id, int k, int8_t* levels) {
    for (int i = 0; i < dims; i++)
      levels[i] = int8_t(std::clamp(nearest_int(0.5f * (id * xval[dims * k + i] - 1)), 0, s.kmax - 1));
  };

  // IQ3_S starts with every group off the grid: when no candidate fits, all are projected at the
  // initial scale.
  bool on_grid[16], on_grid_aux[16];
  std::fill(on_grid, on_grid + groups, s.reproject != Reproject::AllIfAnyOff);
  float best = 0;
  int8_t Laux[32];
  for (int is = -s.steps; is <= s.steps; is++) {
    const float id = (float(2 * s.kmax - 1) + float(is) * s.step) / denominator, this_scale = 1 / id;
    for (int k = 0; k < groups; k++) {
      round_levels(id, k, Laux + dims * k);
      g.project(Laux + dims * k, xval + dims * k, waux + dims * k, this_scale, &on_grid_aux[k]);
    }
    const Fit f = fit(n, Laux, xval, weight);
    if (f.sumq2 > 0 && f.sumqx * f.sumqx > best * f.sumq2) {
      scale = f.sumqx / f.sumq2;
      best = scale * f.sumqx;
      std::copy(Laux, Laux + n, L);
      std::copy(on_grid_aux, on_grid_aux + groups, on_grid);
    }
  }
  const bool any_off = std::find(on_grid, on_grid + groups, false) != on_grid + groups;
  if (scale > 0 && (s.reproject == Reproject::All || any_off)) {
    const float id = 1 / scale;
    for (int k = 0; k < groups; k++) {
      if (s.reproject == Reproject::OffGrid && on_grid[k]) continue;
      round_levels(id, k, L + dims * k);
      g.project(L + dims * k, xval + dims * k, waux + dims * k, scale);
    }
    const Fit f = fit(n, L, xval, weight);
    if (f.sumq2 > 0) scale = f.sumqx / f.sumq2;
  }
  if (scale < 0) {  // ggml's guard (block scales are stored unsigned): flip every sign instead
    scale = -scale;
    for (int o = 0; o < n / 8; o++) signs[o] = uint8_t(~signs[o] & (s.even_signs ? 127 : 255));
  }
  return scale;
}

}  // namespace

void search_superblock(const IqSearch& s, const float* x, const float* importance, IqCodes* codes) {
  constexpr int kSuper = 256;
  const IqGridSearch& g = s.grid();
  *codes = IqCodes{};
  float sumx2 = 0;
  for (int i = 0; i < kSuper; i++) sumx2 += x[i] * x[i];
  const float sigma2 = s.sigma_factor * sumx2 / float(kSuper);

  float scales[16], max_scale = 0, weight[32];
  int8_t L[32];
  for (int ib = 0; ib < kSuper / s.block; ib++) {
    const float* xb = x + s.block * ib;
    for (int i = 0; i < s.block; i++)
      weight[i] = importance ? importance[s.block * ib + i] * std::sqrt(sigma2 + xb[i] * xb[i])
                             : s.plain_sigma * sigma2 + xb[i] * xb[i];
    uint8_t* signs = codes->signs + s.block / 8 * ib;
    scales[ib] = search_block(s, xb, weight, L, signs);
    const int groups = s.block / g.dims();
    for (int k = 0; k < groups; k++) {
      const int e = g.index(L + g.dims() * k);
      if (e < 0) throw Error("IQ quantizer: levels off the grid");
      codes->index[groups * ib + k] = uint16_t(e);
    }
    max_scale = std::max(max_scale, scales[ib]);
  }
  if (max_scale == 0) {
    *codes = IqCodes{};
    return;
  }
  const float d = max_scale / 31, id = 1 / d;
  codes->d = d * s.d_fudge;
  for (int ib = 0; ib < kSuper / s.block; ib++)
    codes->scale[ib] = uint8_t(std::clamp(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15));
}

}  // namespace hart::quant
