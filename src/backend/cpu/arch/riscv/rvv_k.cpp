// K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), IQ4_XS, the ternary TQ1_0 / TQ2_0 and the grid IQ
// types (IQ2_XXS .. IQ1_M) against Q8_K activations, and the Q8_K activation quantizer.
//
// A super-block is 16 groups of 16 weights. Per group the 16 products w*a are formed in int16
// (|w*a| <= 127*127, IQ4_XS's largest) and added, times the group's integer scale, into int32 lanes
// (vwmacc.vx); the integer sum of a super-block is exact. Each super-block then adds d*isum to f32
// lanes, which are reduced once per row. 16 lanes fit every VLEN >= 128 at LMUL 1 for int8.
#include <riscv_vector.h>

#include <cstring>

#include "backend/cpu/arch/riscv/rvv_math.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "quant/blocks.h"
#include "quant/iq_levels.h"

namespace hart::cpu::riscv {
namespace {

constexpr size_t kGroup = 16;  // weights per group, lanes per vector op
constexpr int kGroups = QK_K / kGroup;

// Q4_K / Q5_K: the 6-bit scale and min of 32-weight sub-block j, packed in 12 bytes.
void scale_min_k4(int j, const uint8_t* q, int& scale, int& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Group g's levels of Q4_K / Q5_K: 64-weight chunk c = g / 4 keeps its first 32 weights in the
// low nibbles of qs[32c..32c+32), the next 32 in the high nibbles; Q5_K's fifth bit of weight l
// of the chunk's first (second) half is bit 2c (2c+1) of qh[l].
template <class Block>
vint8m1_t scale_min_levels(const Block& b, int g) {
  const int c = g / 4, half = (g / 2) % 2, l = 16 * (g % 2);
  const vuint8m1_t q = __riscv_vle8_v_u8m1(b.qs + 32 * c + l, kGroup);
  vuint8m1_t v = half ? __riscv_vsrl_vx_u8m1(q, 4, kGroup) : __riscv_vand_vx_u8m1(q, 0xF, kGroup);
  if constexpr (requires { b.qh; }) {
    const vuint8m1_t h = __riscv_vle8_v_u8m1(b.qh + l, kGroup);
    const vuint8m1_t bit = __riscv_vand_vx_u8m1(__riscv_vsrl_vx_u8m1(h, 2 * c + half, kGroup), 1, kGroup);
    v = __riscv_vor_vv_u8m1(v, __riscv_vsll_vx_u8m1(bit, 4, kGroup), kGroup);
  }
  return __riscv_vreinterpret_v_u8m1_i8m1(v);
}

// Group g's levels of Q6_K: in 128-weight half h, weight l + 32k takes nibble k/2 of
// ql[64h + l + 32(k%2)] and bits 2k..2k+1 of qh[32h + l]; levels are 6-bit values - 32.
vint8m1_t q6_levels(const block_q6_K& b, int g) {
  const int h = g / 8, k = (g % 8) / 2, l = 16 * (g % 2);
  const vuint8m1_t ql = __riscv_vle8_v_u8m1(b.ql + 64 * h + l + 32 * (k % 2), kGroup);
  const vuint8m1_t lo = k / 2 ? __riscv_vsrl_vx_u8m1(ql, 4, kGroup) : __riscv_vand_vx_u8m1(ql, 0xF, kGroup);
  const vuint8m1_t qh = __riscv_vle8_v_u8m1(b.qh + 32 * h + l, kGroup);
  const vuint8m1_t hi = __riscv_vand_vx_u8m1(__riscv_vsrl_vx_u8m1(qh, 2 * k, kGroup), 3, kGroup);
  const vuint8m1_t v = __riscv_vor_vv_u8m1(lo, __riscv_vsll_vx_u8m1(hi, 4, kGroup), kGroup);
  return __riscv_vsub_vx_i8m1(__riscv_vreinterpret_v_u8m1_i8m1(v), 32, kGroup);
}

// Q2_K / Q3_K: group g's 2-bit fields. In 128-weight half h, weight 32k + l sits in bits
// 2k..2k+1 of qs[32h + l].
vuint8m1_t crumbs(const uint8_t* qs, int g) {
  const int h = g / 8, k = (g % 8) / 2, l = 16 * (g % 2);
  const vuint8m1_t q = __riscv_vle8_v_u8m1(qs + 32 * h + l, kGroup);
  return __riscv_vand_vx_u8m1(__riscv_vsrl_vx_u8m1(q, 2 * k, kGroup), 3, kGroup);
}

vint8m1_t q2_levels(const block_q2_K& b, int g) { return __riscv_vreinterpret_v_u8m1_i8m1(crumbs(b.qs, g)); }

// Q3_K: the 2-bit field minus 4 where the weight's bit in hmask is clear (weight 32c + l: bit c
// of hmask[l]).
vint8m1_t q3_levels(const block_q3_K& b, int g) {
  const vuint8m1_t h = __riscv_vle8_v_u8m1(b.hmask + 16 * (g % 2), kGroup);
  const vbool8_t clear = __riscv_vmseq_vx_u8m1_b8(__riscv_vand_vx_u8m1(h, uint8_t(1 << (g / 2)), kGroup), 0, kGroup);
  const vint8m1_t q = __riscv_vreinterpret_v_u8m1_i8m1(crumbs(b.qs, g));
  return __riscv_vsub_vx_i8m1_mu(clear, q, q, 4, kGroup);
}

// IQ4_XS: group g is the low (g even) or high nibbles of the 16 bytes of 32-weight block g / 2,
// indexing IQ4_NL's table.
vint8m1_t iq4_xs_levels(const block_iq4_xs& b, int g) {
  const vuint8m1_t q = __riscv_vle8_v_u8m1(b.qs + 16 * (g / 2), kGroup);
  const vuint8m1_t idx = g % 2 ? __riscv_vsrl_vx_u8m1(q, 4, kGroup) : __riscv_vand_vx_u8m1(q, 0xF, kGroup);
  return __riscv_vrgather_vv_i8m1(__riscv_vle8_v_i8m1(kIq4Levels, kGroup), idx, kGroup);
}

// TQ2_0: Q2_K's 2-bit fields minus 1.
vint8m1_t tq2_levels(const block_tq2_0& b, int g) {
  return __riscv_vsub_vx_i8m1(__riscv_vreinterpret_v_u8m1_i8m1(crumbs(b.qs, g)), 1, kGroup);
}

// TQ1_0 (layout in src/quant/tq1_0.cpp): trit k of a byte is (3 * (byte * 3^k mod 256)) >> 8.
// Groups 0..9 are trit g / 2 of qs[16 (g % 2) ..), 10..14 trit g - 10 of qs[32..48), and 15 trit
// l / 4 of qh[l % 4] in lane l.
constexpr uint8_t kTq1TailBytes[kGroup] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
constexpr uint8_t kTq1TailPow3[kGroup] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};

vint8m1_t tq1_levels(const block_tq1_0& b, int g) {
  vuint8m1_t q;
  if (g < 15) {
    constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const vuint8m1_t bytes = __riscv_vle8_v_u8m1(g < 10 ? b.qs + 16 * (g % 2) : b.qs + 32, kGroup);
    q = __riscv_vmul_vx_u8m1(bytes, kPow3[g < 10 ? g / 2 : g - 10], kGroup);
  } else {
    const vuint8m1_t qh = __riscv_vle8_v_u8m1(b.qh, 4);
    const vuint8m1_t bytes = __riscv_vrgather_vv_u8m1(qh, __riscv_vle8_v_u8m1(kTq1TailBytes, kGroup), kGroup);
    q = __riscv_vmul_vv_u8m1(bytes, __riscv_vle8_v_u8m1(kTq1TailPow3, kGroup), kGroup);
  }
  const vuint8m1_t t = __riscv_vnsrl_wx_u8m1(__riscv_vwmulu_vx_u16m2(q, 3, kGroup), 8, kGroup);
  return __riscv_vsub_vx_i8m1(__riscv_vreinterpret_v_u8m1_i8m1(t), 1, kGroup);
}

// The grid IQ types (src/quant/iq_levels.h): group g is octets 2g and 2g + 1, their two grid
// entries loaded as 16 bytes; sign bits (one mask bit per lane) negate lanes, or for IQ1 the
// levels become 8 * level + 1, 2 less where the octet's shift is down.
template <class Block>
vint8m1_t iq_levels(const Block& b, int g) {
  using L = quant::Iq<Block>;
  const quant::IqOctet lo = L::octet(b, 2 * g), hi = L::octet(b, 2 * g + 1);
  const uint64_t grid[2] = {lo.grid, hi.grid};
  const vint8m1_t v = __riscv_vle8_v_i8m1(reinterpret_cast<const int8_t*>(grid), kGroup);
  if constexpr (L::kShifted) {
    const uint8_t minus[2] = {uint8_t(lo.minus ? 0xff : 0), uint8_t(hi.minus ? 0xff : 0)};
    const vint8m1_t up = __riscv_vadd_vx_i8m1(__riscv_vsll_vx_i8m1(v, 3, kGroup), 1, kGroup);
    return __riscv_vsub_vx_i8m1_mu(__riscv_vlm_v_b8(minus, kGroup), up, up, 2, kGroup);
  } else {
    const uint8_t signs[2] = {lo.signs, hi.signs};
    return __riscv_vrsub_vx_i8m1_mu(__riscv_vlm_v_b8(signs, kGroup), v, v, 0, kGroup);
  }
}

// The weight block's float scale: d, or an IQ type's factor.
template <class Block>
float super_scale(const Block& b) {
  if constexpr (requires { quant::Iq<Block>::factor(b); }) return quant::Iq<Block>::factor(b);
  else return fp16_to_f32(b.d);
}

// Integer scale of each group; returns the min correction dmin * sum(bsums * mins) (0 for the
// types without a minimum), still to be multiplied by the activation's d.
template <class Block>
float group_scales(const Block& b, const block_q8_K& x, int16_t* scale16) {  // Q4_K, Q5_K
  int corr = 0;
  for (int j = 0; j < 8; j++) {
    int sc, m;
    scale_min_k4(j, b.scales, sc, m);
    scale16[2 * j] = scale16[2 * j + 1] = int16_t(sc);
    corr += m * (x.bsums[2 * j] + x.bsums[2 * j + 1]);
  }
  return fp16_to_f32(b.dmin) * float(corr);
}

float group_scales(const block_q6_K& b, const block_q8_K&, int16_t* scale16) {
  for (int g = 0; g < kGroups; g++) scale16[g] = b.scales[g];
  return 0.0f;
}

// Q2_K: a 4-bit scale (low nibble) and min (high nibble) per group.
float group_scales(const block_q2_K& b, const block_q8_K& x, int16_t* scale16) {
  int corr = 0;
  for (int g = 0; g < kGroups; g++) {
    scale16[g] = int16_t(b.scales[g] & 0xF);
    corr += (b.scales[g] >> 4) * x.bsums[g];
  }
  return fp16_to_f32(b.dmin) * float(corr);
}

// Q3_K: 6-bit scales - 32; scale g's low 4 bits are nibble g / 8 of byte g % 8, its high 2 bits
// bits 2(g/4)..2(g/4)+1 of byte 8 + g % 4.
float group_scales(const block_q3_K& b, const block_q8_K&, int16_t* scale16) {
  for (int g = 0; g < kGroups; g++) {
    const int low = (b.scales[g % 8] >> (4 * (g / 8))) & 0xF, high = (b.scales[8 + g % 4] >> (2 * (g / 4))) & 3;
    scale16[g] = int16_t((low | (high << 4)) - 32);
  }
  return 0.0f;
}

// IQ4_XS: a 6-bit scale - 32 per two groups (low nibble in scales_l, high 2 bits in scales_h).
float group_scales(const block_iq4_xs& b, const block_q8_K&, int16_t* scale16) {
  for (int ib = 0; ib < kGroups / 2; ib++) {
    const int ls = ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
    scale16[2 * ib] = scale16[2 * ib + 1] = int16_t(ls - 32);
  }
  return 0.0f;
}

// The ternary types: one scale for the whole super-block.
float unit_scales(int16_t* scale16) {
  for (int g = 0; g < kGroups; g++) scale16[g] = 1;
  return 0.0f;
}
float group_scales(const block_tq1_0&, const block_q8_K&, int16_t* scale16) { return unit_scales(scale16); }
float group_scales(const block_tq2_0&, const block_q8_K&, int16_t* scale16) { return unit_scales(scale16); }

// The grid IQ types: one odd scale 2s + 1 per group (the IQ2 / IQ1_M ones) or per two.
template <class Block>
  requires requires(const Block& b) { quant::Iq<Block>::scale(b, 0); }
float group_scales(const Block& b, const block_q8_K&, int16_t* scale16) {
  for (int g = 0; g < kGroups; g++) scale16[g] = int16_t(quant::Iq<Block>::scale(b, g));
  return 0.0f;
}

template <class Block, vint8m1_t (*Levels)(const Block&, int)>
void vec_dot_k(int64_t n, float* out, const void* wv, const void* xv) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const block_q8_K*>(xv);
  vfloat32m4_t acc = zero_lanes();
  float mins = 0;
  for (int64_t i = 0; i < n / QK_K; i++) {
    int16_t scale16[kGroups];
    mins += x[i].d * group_scales(w[i], x[i], scale16);
    vint32m4_t isum = __riscv_vmv_v_x_i32m4(0, kGroup);
    for (int g = 0; g < kGroups; g++) {
      const vint8m1_t a = __riscv_vle8_v_i8m1(x[i].qs + kGroup * g, kGroup);
      const vint16m2_t p = __riscv_vwmul_vv_i16m2(Levels(w[i], g), a, kGroup);
      isum = __riscv_vwmacc_vx_i32m4(isum, scale16[g], p, kGroup);
    }
    const float d = super_scale(w[i]) * x[i].d;
    acc = __riscv_vfmacc_vf_f32m4_tu(acc, d, __riscv_vfcvt_f_x_v_f32m4(isum, kGroup), kGroup);
  }
  *out = sum_lanes(acc) - mins;
}

// Q8_K as ggml's quantize_row_q8_K_ref: the signed value of largest magnitude (the first on ties)
// maps to -127, levels round to nearest even, bsums hold each group's level sum.
void quantize_q8_k(const float* xf, void* y, int64_t n) {
  auto* out = static_cast<block_q8_K*>(y);
  const vfloat32m1_t zero = __riscv_vfmv_s_f_f32m1(0.0f, 1);
  for (int64_t i = 0; i < n / QK_K; i++) {
    const float* x = xf + i * QK_K;
    block_q8_K& b = out[i];
    vfloat32m1_t red = zero;
    for (size_t e = 0, vl; e < size_t(QK_K); e += vl) {
      vl = __riscv_vsetvl_e32m8(QK_K - e);
      red = __riscv_vfredmax_vs_f32m8_f32m1(__riscv_vfabs_v_f32m8(__riscv_vle32_v_f32m8(x + e, vl), vl), red, vl);
    }
    const float amax = __riscv_vfmv_f_s_f32m1_f32(red);
    if (amax == 0) {
      std::memset(&b, 0, sizeof(b));
      continue;
    }
    float max = 0;
    for (size_t e = 0, vl; e < size_t(QK_K); e += vl) {
      vl = __riscv_vsetvl_e32m8(QK_K - e);
      const vfloat32m8_t v = __riscv_vfabs_v_f32m8(__riscv_vle32_v_f32m8(x + e, vl), vl);
      const long first = __riscv_vfirst_m_b4(__riscv_vmfeq_vf_f32m8_b4(v, amax, vl), vl);
      if (first >= 0) {
        max = x[e + size_t(first)];
        break;
      }
    }
    const float iscale = -127.f / max;
    for (size_t e = 0, vl; e < size_t(QK_K); e += vl) {
      vl = __riscv_vsetvl_e32m8(QK_K - e);
      const vfloat32m8_t v = __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(x + e, vl), iscale, vl);
      const vint32m8_t q = __riscv_vmin_vx_i32m8(__riscv_vfcvt_x_f_v_i32m8_rm(v, __RISCV_FRM_RNE, vl), 127, vl);
      __riscv_vse8_v_i8m2(b.qs + e, __riscv_vncvt_x_x_w_i8m2(__riscv_vncvt_x_x_w_i16m4(q, vl), vl), vl);
    }
    const vint16m1_t z = __riscv_vmv_s_x_i16m1(0, 1);
    for (int g = 0; g < kGroups; g++) {
      const vint8m1_t q = __riscv_vle8_v_i8m1(b.qs + kGroup * g, kGroup);
      b.bsums[g] = __riscv_vmv_x_s_i16m1_i16(__riscv_vwredsum_vs_i8m1_i16m1(q, z, kGroup));
    }
    b.d = 1 / iscale;
  }
}

}  // namespace

void fill_rvv_k(Kernels& k) {
  k.dot[uint32_t(Type::Q4_K)] = {Type::Q8_K, vec_dot_k<block_q4_K, scale_min_levels<block_q4_K>>};
  k.dot[uint32_t(Type::Q5_K)] = {Type::Q8_K, vec_dot_k<block_q5_K, scale_min_levels<block_q5_K>>};
  k.dot[uint32_t(Type::Q6_K)] = {Type::Q8_K, vec_dot_k<block_q6_K, q6_levels>};
  k.dot[uint32_t(Type::Q2_K)] = {Type::Q8_K, vec_dot_k<block_q2_K, q2_levels>};
  k.dot[uint32_t(Type::Q3_K)] = {Type::Q8_K, vec_dot_k<block_q3_K, q3_levels>};
  k.dot[uint32_t(Type::IQ4_XS)] = {Type::Q8_K, vec_dot_k<block_iq4_xs, iq4_xs_levels>};
  k.dot[uint32_t(Type::TQ1_0)] = {Type::Q8_K, vec_dot_k<block_tq1_0, tq1_levels>};
  k.dot[uint32_t(Type::TQ2_0)] = {Type::Q8_K, vec_dot_k<block_tq2_0, tq2_levels>};
  k.dot[uint32_t(Type::IQ2_XXS)] = {Type::Q8_K, vec_dot_k<block_iq2_xxs, iq_levels<block_iq2_xxs>>};
  k.dot[uint32_t(Type::IQ2_XS)] = {Type::Q8_K, vec_dot_k<block_iq2_xs, iq_levels<block_iq2_xs>>};
  k.dot[uint32_t(Type::IQ2_S)] = {Type::Q8_K, vec_dot_k<block_iq2_s, iq_levels<block_iq2_s>>};
  k.dot[uint32_t(Type::IQ3_XXS)] = {Type::Q8_K, vec_dot_k<block_iq3_xxs, iq_levels<block_iq3_xxs>>};
  k.dot[uint32_t(Type::IQ3_S)] = {Type::Q8_K, vec_dot_k<block_iq3_s, iq_levels<block_iq3_s>>};
  k.dot[uint32_t(Type::IQ1_S)] = {Type::Q8_K, vec_dot_k<block_iq1_s, iq_levels<block_iq1_s>>};
  k.dot[uint32_t(Type::IQ1_M)] = {Type::Q8_K, vec_dot_k<block_iq1_m, iq_levels<block_iq1_m>>};
  k.from_f32[uint32_t(Type::Q8_K)] = quantize_q8_k;
}

}  // namespace hart::cpu::riscv
