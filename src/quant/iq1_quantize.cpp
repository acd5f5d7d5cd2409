// The IQ1_S and IQ1_M quantizers (ggml's quantize_row_iq1_s_impl / quantize_row_iq1_m_impl). Both
// quantize a block (32 / 16 weights) to levels -1, 0, 1 shifted by +-1/8, where the shift's sign
// is chosen per "part" of the block (IQ1_S: the whole block, IQ1_M: each half): with three levels
// the weighted least-squares optimum is found exhaustively over the two boundaries that split the
// sorted weights, for every combination of the parts' shifts. Octets off the grid then move to
// the nearest grid entry and the scale is refitted.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <numeric>

#include "quant/blocks.h"
#include "quant/iq_grid_search.h"
#include "quant/iq_grids.h"
#include "quant/iq_quantize.h"
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

constexpr float kDelta = 0.125f;
// The three level values shifted up (plus) or down (minus).
constexpr float kPlus[3] = {-1 + kDelta, kDelta, 1 + kDelta};
constexpr float kMinus[3] = {-1 - kDelta, -kDelta, 1 - kDelta};

const IqGridSearch& grid_iq1() {
  static const IqGridSearch g(kIq1sGrid, 2048, 8, 8, 3);
  return g;
}

struct Iq1Search {
  int block;       // weights per block scale
  int parts;       // parts with their own shift sign (of block / parts weights)
  bool collapsed;  // IQ1_M sums a split as T*v2 - S(i1) - S(i2); IQ1_S term by term (ggml's float orders)
  float eps;       // blocks whose largest |x| is below this are zero
};

// One block's result: its scale, the grid entry of each octet, and which parts shift down (bit
// parts-1-h for part h, ggml's order of trying the combinations).
struct Iq1Block {
  float scale = 0;
  uint16_t index[4] = {};
  unsigned minus = 0;
};

const float* values_of(const Iq1Search& s, unsigned minus, int part) {
  return (minus >> (s.parts - 1 - part)) & 1 ? kMinus : kPlus;
}

Iq1Block search_block(const Iq1Search& s, const float* xb, const float* weight) {
  const int n = s.block, part_size = n / s.parts;
  Iq1Block r;
  float max = 0;
  for (int i = 0; i < n; i++) max = std::max(max, std::fabs(xb[i]));
  if (max < s.eps) return r;

  int order[32];
  std::iota(order, order + n, 0);
  std::sort(order, order + n, [&](int a, int b) { return xb[a] < xb[b]; });
  // Prefix sums of w*x and w over the sorted weights, per part.
  float px[2][33] = {}, pw[2][33] = {};
  for (int j = 0; j < n; j++) {
    const int i = order[j], h = i / part_size;
    for (int p = 0; p < s.parts; p++) {
      px[p][j + 1] = px[p][j] + (p == h ? weight[i] * xb[i] : 0.f);
      pw[p][j + 1] = pw[p][j] + (p == h ? weight[i] : 0.f);
    }
  }
  // The fit of part p with split (i1, i2) and level values v.
  auto part_fit = [&](int p, int i1, int i2, const float* v, float* qx, float* q2) {
    if (s.collapsed) {
      const float sx = px[p][i1] + px[p][i2];
      *qx = px[p][n] * v[2] - sx;
      *q2 = pw[p][n] * v[2] * v[2] + pw[p][i1] * (v[0] * v[0] - v[1] * v[1]) + pw[p][i2] * (v[1] * v[1] - v[2] * v[2]);
    } else {
      *qx = (px[p][i1] - px[p][0]) * v[0] + (px[p][i2] - px[p][i1]) * v[1] + (px[p][n] - px[p][i2]) * v[2];
      *q2 = (pw[p][i1] - pw[p][0]) * v[0] * v[0] + (pw[p][i2] - pw[p][i1]) * v[1] * v[1] +
            (pw[p][n] - pw[p][i2]) * v[2] * v[2];
    }
  };
  float best = -FLT_MAX, scale = max;
  int best1 = -1, best2 = -1;
  unsigned best_minus = 0;
  for (int i1 = 0; i1 <= n; i1++) {
    for (int i2 = i1; i2 <= n; i2++) {
      float qx[2][2], q2[2][2];  // [part][minus]
      for (int p = 0; p < s.parts; p++) {
        part_fit(p, i1, i2, kPlus, &qx[p][0], &q2[p][0]);
        part_fit(p, i1, i2, kMinus, &qx[p][1], &q2[p][1]);
      }
      for (unsigned k = 0; k < (1u << s.parts); k++) {
        float sumqx = qx[0][(k >> (s.parts - 1)) & 1], sumq2 = q2[0][(k >> (s.parts - 1)) & 1];
        if (s.parts == 2) {
          sumqx += qx[1][k & 1];
          sumq2 += q2[1][k & 1];
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          best1 = i1;
          best2 = i2;
          best_minus = k;
        }
      }
    }
  }
  if (best1 < 0) return r;
  int8_t L[32];
  for (int j = 0; j < n; j++) L[order[j]] = int8_t(j < best1 ? 0 : j < best2 ? 1 : 2);
  if (scale < 0) {  // the mirrored levels with the opposite shifts
    for (int j = 0; j < n; j++) L[j] = int8_t(2 - L[j]);
    scale = -scale;
    best_minus = ~best_minus & ((1u << s.parts) - 1);
  }
  const IqGridSearch& g = grid_iq1();
  bool all_on_grid = true;
  for (int k = 0; k < n / 8; k++) {
    int e = g.index(L + 8 * k);
    if (e < 0) {
      all_on_grid = false;
      e = g.nearest(L + 8 * k, xb + 8 * k, weight + 8 * k, scale, values_of(s, best_minus, 8 * k / part_size));
    }
    r.index[k] = uint16_t(e);
  }
  if (!all_on_grid) {
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < n / 8; k++) {
      const float* v = values_of(s, best_minus, 8 * k / part_size);
      const int8_t* levels = g.levels(r.index[k]);
      for (int j = 0; j < 8; j++) {
        const float w = weight[8 * k + j], q = v[levels[j]];
        sumqx += w * q * xb[8 * k + j];
        sumq2 += w * q * q;
      }
    }
    if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
  }
  r.scale = scale;
  r.minus = best_minus;
  return r;
}

// All blocks of a 256-weight super-block and the 3-bit block scales under d = max_scale / 15
// (0 when the super-block is zero). Weights: importance * sqrt(sigma2 + x^2), else x^2.
struct Iq1Super {
  Iq1Block block[16];
  int level[16] = {};  // block scale ~ d * (2 level + 1)
  float d = 0;
  float weight[256];
};

void search_superblock(const Iq1Search& s, const float* x, const float* importance, Iq1Super* out) {
  float sumx2 = 0;
  for (int i = 0; i < 256; i++) sumx2 += x[i] * x[i];
  const float sigma2 = 2 * sumx2 / 256;
  for (int i = 0; i < 256; i++) out->weight[i] = importance ? importance[i] * std::sqrt(sigma2 + x[i] * x[i]) : x[i] * x[i];
  float max_scale = 0;
  for (int ib = 0; ib < 256 / s.block; ib++) {
    out->block[ib] = search_block(s, x + s.block * ib, out->weight + s.block * ib);
    max_scale = std::max(max_scale, out->block[ib].scale);
  }
  if (max_scale == 0) return;
  out->d = max_scale / 15;
  const float id = 1 / out->d;
  for (int ib = 0; ib < 256 / s.block; ib++)
    out->level[ib] = std::clamp(nearest_int(0.5f * (id * out->block[ib].scale - 1)), 0, 7);
}

constexpr Iq1Search kIq1s{.block = 32, .parts = 1, .collapsed = false, .eps = 1e-12f};
constexpr Iq1Search kIq1m{.block = 16, .parts = 2, .collapsed = true, .eps = 1e-7f};

// IQ1_S: per 32 weights 4 index bytes and a 16-bit word of the 3 high index bits per octet, the
// scale (bits 12..14) and the shift (bit 15: down); d stored with ggml's 1.125 fudge.
void pack_iq1_s(const Iq1Super& c, const float*, block_iq1_s& b) {
  std::memset(&b, 0, sizeof(b));
  if (c.d == 0) return;
  b.d = f32_to_fp16(c.d * 1.125f);
  for (int ib = 0; ib < 8; ib++) {
    unsigned h = unsigned(c.level[ib]) << 12 | (c.block[ib].minus ? 0x8000u : 0u);
    for (int k = 0; k < 4; k++) {
      b.qs[4 * ib + k] = uint8_t(c.block[ib].index[k] & 255);
      h |= unsigned(c.block[ib].index[k] >> 8) << (3 * k);
    }
    b.qh[ib] = uint16_t(h);
  }
}

// IQ1_M: per 16 weights 2 index bytes and a byte of two nibbles (3 high index bits, shift bit 3),
// 3-bit scales four to a 16-bit word, and d (refitted over the whole super-block with the
// rounded block scales, times ggml's 1.1125 fudge) in the words' top nibbles.
void pack_iq1_m(const Iq1Super& c, const float* x, block_iq1_m& b) {
  std::memset(&b, 0, sizeof(b));
  if (c.d == 0) return;
  uint16_t sc[4] = {};
  float sumqx = 0, sumq2 = 0;
  for (int ib = 0; ib < 16; ib++) {
    const Iq1Block& blk = c.block[ib];
    sc[ib / 4] = uint16_t(sc[ib / 4] | c.level[ib] << (3 * (ib % 4)));
    b.qh[ib] = uint8_t((blk.index[0] >> 8) | (blk.index[1] >> 8) << 4 | (blk.minus & 2 ? 0x08 : 0) | (blk.minus & 1 ? 0x80 : 0));
    for (int k = 0; k < 2; k++) {
      b.qs[2 * ib + k] = uint8_t(blk.index[k] & 255);
      const float* v = values_of(kIq1m, blk.minus, k);
      const int8_t* levels = grid_iq1().levels(blk.index[k]);
      for (int j = 0; j < 8; j++) {
        const int i = 16 * ib + 8 * k + j;
        const float q = v[levels[j]] * float(2 * c.level[ib] + 1);
        sumqx += c.weight[i] * q * x[i];
        sumq2 += c.weight[i] * q * q;
      }
    }
  }
  const float d = sumq2 > 0 ? sumqx / sumq2 : c.d;
  const uint16_t bits = f32_to_fp16(d * 1.1125f);
  sc[0] = uint16_t(sc[0] | (bits & 0x000f) << 12);
  sc[1] = uint16_t(sc[1] | (bits & 0x00f0) << 8);
  sc[2] = uint16_t(sc[2] | (bits & 0x0f00) << 4);
  sc[3] = uint16_t(sc[3] | (bits & 0xf000));
  std::memcpy(b.scales, sc, sizeof(sc));
}

template <class Block, const Iq1Search& S, void (*Pack)(const Iq1Super&, const float*, Block&)>
void quantize_superblocks(const float* src, void* dst, int64_t n, const float* importance) {
  auto* b = static_cast<Block*>(dst);
  Iq1Super c;
  for (int64_t i = 0; i < n / 256; i++) {
    c = Iq1Super{};
    search_superblock(S, src + 256 * i, importance ? importance + 256 * i : nullptr, &c);
    Pack(c, src + 256 * i, b[i]);
  }
}

}  // namespace

void quantize_iq1_s(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq1_s, kIq1s, pack_iq1_s>(src, dst, n, importance);
}
void quantize_iq1_m(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq1_m, kIq1m, pack_iq1_m>(src, dst, n, importance);
}

}  // namespace hart::quant
