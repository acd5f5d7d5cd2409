// MUL_MAT on Q2_K, Q3_K and IQ4_XS weights repacked into 32-row byte panels (repack.h, their
// "_bytes" layouts) against Q8_K activations; included by rvv_panels_q.h, which registers them
// with the other quantized panels. One strip template (LevelStrips) serves the three types: a
// type's traits class L says where its fields sit and how to decode them for all the strip's
// rows at once, and the packer has re-cut every type's level bits so that unit m (a few level
// bytes) holds elements 8m .. 8m + 7 of the super-block in order. Per row and super-block:
//   y += dx * (d * sum_g scale_g * sum_{i in g} level_i x_i  -  dmin * sum_g min_g * bsums[g])
// with the mins term for Q2_K only. Each level vector (e8, lane = row) times the activation's
// scalar element updates the rows' integer sums lane by lane (vwmacc.vx), with no reduction.
//
// L provides:
//   Block                            the weight block (its size is the panel column's per row)
//   kMins                            true: fp16 dmin[32] follows d[32] and L::min gives the mins
//   kScaleBytes                      scale bytes after the fp16 fields, byte i of the rows at
//                                    [i * 32 + r]; the level bytes follow them
//   kChain                           products per int16 chain before it is added into int32
//   kBias                            stored levels are level + kBias (a chain starts at
//                                    -kBias * bsums[g], so that it ends as sum level * x)
//   vint16m2_t scale(sb, g, vl)      group g's integer scale of the rows (sb: their scale bytes)
//   vint16m2_t min(sb, g, vl)        group g's integer min (kMins only)
//   kColumns                         4 where a unit's level bytes are one LMUL 4 load at VLEN 256
//                                    (strip_by_columns), else 1
//   vint8m1x8_t unit<kCols>(q, m, vl) the rows' levels + kBias of elements 8m .. 8m + 7
//
// Integer ranges (|x| <= 127, the Q8_K quantizer maps the largest magnitude to -127): Q2_K levels
// 0..3 and Q3_K's stored 0..7 from a start of at most 4 * 16 * 127 give chains of 16 products
// within int16 (8128 + 16 * 7 * 127 = 22352); IQ4_XS levels reach -127, so only a pair of
// products fits (2 * 127 * 127 = 32258): its chains are pairs. A super-block's sums are exact in
// int32 and are converted and scaled once. H widens fp16 as in rvv_panels_q.h (H::scales).
#pragma once

#include <riscv_vector.h>

#include <type_traits>

#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_panels_q4_k.h"  // Q8KRows
#include "backend/cpu/repack.h"
#include "quant/blocks.h"

namespace hart::cpu::riscv {
namespace {

constexpr int kLevelGroups = QK_K / 16;

// Byte i of the strip's rows (each at bytes + i * kPanelRows).
inline vuint8m1_t row_bytes(const uint8_t* bytes, int i, size_t vl) {
  return __riscv_vle8_v_u8m1(bytes + i * kPanelRows, vl);
}

// A 6-bit scale stored + 32 (Q3_K, IQ4_XS), as int16 lanes: the nibble of byte `low` at bit
// low_shift (0 or 4) with bits hi_shift, hi_shift + 1 of byte `high` above it, minus 32.
inline vint16m2_t six_bit_scale(const uint8_t* sb, int low, int low_shift, int high, int hi_shift, size_t vl) {
  const vuint8m1_t lb = row_bytes(sb, low, vl);
  const vuint8m1_t lo = low_shift ? __riscv_vsrl_vx_u8m1(lb, 4, vl) : __riscv_vand_vx_u8m1(lb, 0xF, vl);
  vuint8m1_t hi = row_bytes(sb, high, vl);
  // The two bits to bits 4 and 5.
  if (hi_shift < 4) hi = __riscv_vsll_vx_u8m1(hi, size_t(4 - hi_shift), vl);
  if (hi_shift > 4) hi = __riscv_vsrl_vx_u8m1(hi, size_t(hi_shift - 4), vl);
  const vuint8m1_t v = __riscv_vor_vv_u8m1(lo, __riscv_vand_vx_u8m1(hi, 0x30, vl), vl);
  // (v - 32) mod 2^16 is v - 32 as int16.
  return __riscv_vreinterpret_v_u16m2_i16m2(__riscv_vwsubu_vx_u16m2(v, 32, vl));
}

inline vint8m1_t as_levels(vuint8m1_t v) { return __riscv_vreinterpret_v_u8m1_i8m1(v); }
inline vint8m2_t as_levels(vuint8m2_t v) { return __riscv_vreinterpret_v_u8m2_i8m2(v); }
inline vint8m4_t as_levels(vuint8m4_t v) { return __riscv_vreinterpret_v_u8m4_i8m4(v); }

// kRegs vector registers of bytes (LMUL 1, 2 or 4). The ops on them are the overloaded
// intrinsics, so one body serves every LMUL.
template <int kRegs>
using Bytes = std::conditional_t<kRegs == 1, vuint8m1_t, std::conditional_t<kRegs == 2, vuint8m2_t, vuint8m4_t>>;

// n bytes from p (n <= VLMAX at LMUL kRegs).
template <int kRegs>
inline Bytes<kRegs> load_bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  if constexpr (kRegs == 1)
    return __riscv_vle8_v_u8m1(b, n);
  else if constexpr (kRegs == 2)
    return __riscv_vle8_v_u8m2(b, n);
  else
    return __riscv_vle8_v_u8m4(b, n);
}

// kCols byte columns of a strip in one group, column c in registers c * G .. c * G + G - 1: G
// registers hold one column's bytes of the strip's rows (G = 1; G = 2 for a whole 32-row panel at
// VLEN 128, Block32Strips), and kCols = 1, or 4 / G where the group of LMUL 4 holds exactly that
// many whole columns (strip_by_columns: VLEN 256, and 128 with G = 2).
template <int kCols, int G = 1>
using Cols = Bytes<kCols * G>;

// kCols consecutive byte columns of the strip's rows (vl of them), the first at p.
template <int kCols, int G = 1>
inline Cols<kCols, G> load_columns(const uint8_t* p, size_t vl) {
  return load_bytes<kCols * G>(p, kCols * vl);
}

// Levels as a signed LMUL 4 group (its first register(s) alone below LMUL 4).
inline vint8m4_t as_group(vint8m1_t v) { return __riscv_vlmul_ext_v_i8m1_i8m4(v); }
inline vint8m4_t as_group(vint8m2_t v) { return __riscv_vlmul_ext_v_i8m2_i8m4(v); }
inline vint8m4_t as_group(vint8m4_t v) { return v; }
inline vint8m4_t as_group(vuint8m1_t v) { return as_group(as_levels(v)); }
inline vint8m4_t as_group(vuint8m2_t v) { return as_group(as_levels(v)); }
inline vint8m4_t as_group(vuint8m4_t v) { return as_levels(v); }

// The kIq4Levels entries the low (high) nibbles of the n bytes v index (IQ4_XS, IQ4_NL). The
// 16-entry table fits the first register of the gather's group at every VLEN >= 128, and indices
// < 16 read only it; its load is the same in every call, so the compiler keeps one per kernel.
template <int kRegs>
inline vint8m4_t iq4_levels(Bytes<kRegs> v, bool high, size_t n) {
  const Bytes<kRegs> table = load_bytes<kRegs>(kIq4Levels, 16);
  return as_group(__riscv_vrgather(table, high ? __riscv_vsrl(v, 4, n) : __riscv_vand(v, 0xF, n), n));
}

// Q2_K (pack_panel_q2_K_bytes): d, dmin, the 16 scale bytes (scale: low nibble, min: high), then
// level byte j holds elements 4j .. 4j + 3 in bits 0-1, 2-3, 4-5, 6-7.
struct Q2KLevels {
  using Block = block_q2_K;
  static constexpr bool kMins = true;
  static constexpr int kScaleBytes = QK_K / 16, kChain = 16, kBias = 0;
  static constexpr int kColumns = 1;  // a unit's 2 bytes: no LMUL 4 load of whole units
  static vint16m2_t scale(const uint8_t* sb, int g, size_t vl) {
    return __riscv_vreinterpret_v_u16m2_i16m2(__riscv_vzext_vf2_u16m2(__riscv_vand_vx_u8m1(row_bytes(sb, g, vl), 0xF, vl), vl));
  }
  static vint16m2_t min(const uint8_t* sb, int g, size_t vl) {
    return __riscv_vreinterpret_v_u16m2_i16m2(__riscv_vzext_vf2_u16m2(__riscv_vsrl_vx_u8m1(row_bytes(sb, g, vl), 4, vl), vl));
  }
  template <int kCols>
  static vint8m1x8_t unit(const uint8_t* q, int m, size_t vl) {
    static_assert(kCols == kColumns);
    const vuint8m1_t a = row_bytes(q, 2 * m, vl), b = row_bytes(q, 2 * m + 1, vl);
    const auto crumb = [vl](vuint8m1_t v, int i) {
      if (i == 3) return as_levels(__riscv_vsrl_vx_u8m1(v, 6, vl));
      return as_levels(__riscv_vand_vx_u8m1(i ? __riscv_vsrl_vx_u8m1(v, size_t(2 * i), vl) : v, 3, vl));
    };
    return __riscv_vcreate_v_i8m1x8(crumb(a, 0), crumb(a, 1), crumb(a, 2), crumb(a, 3), crumb(b, 0), crumb(b, 1),
                                    crumb(b, 2), crumb(b, 3));
  }
};

// Q3_K (pack_panel_q3_K_bytes): d, the 12 scale bytes as stored (scale g: nibble g / 8 of byte
// g % 8, bits 2(g / 4), 2(g / 4) + 1 of byte 8 + g % 4 above it, minus 32), then 3 level bytes per
// 8 elements holding u_i = level_i + 4 (0..7): b0 = u0 | u1 << 3 | (u6 & 3) << 6,
// b1 = u2 | u3 << 3 | (u7 & 3) << 6, b2 = u4 | u5 << 3 | (u6 >> 2) << 6 | (u7 >> 2) << 7.
struct Q3KLevels {
  using Block = block_q3_K;
  static constexpr bool kMins = false;
  static constexpr int kScaleBytes = 12, kChain = 16, kBias = 4;
  static constexpr int kColumns = 4;  // a unit's 3 bytes: one LMUL 4 load at VLEN 256
  static vint16m2_t scale(const uint8_t* sb, int g, size_t vl) {
    return six_bit_scale(sb, g % 8, g < 8 ? 0 : 4, 8 + g % 4, 2 * (g / 4), vl);
  }
  template <int kCols>
  static vint8m1x8_t unit(const uint8_t* q, int m, size_t vl) {
    // u = low 3 bits, bits 3-5 of a byte (overloaded: one op serves the 3 bytes of an LMUL 4 load).
    const auto low = [](auto v, size_t n) { return __riscv_vand(v, 7, n); };
    const auto mid = [](auto v, size_t n) { return __riscv_vand(__riscv_vsrl(v, 3, n), 7, n); };
    // Bits 6-7 of b0 (b1) are u6's (u7's) low bits, bit 6 (7) of b2 its high bit.
    const auto split = [vl](vuint8m1_t v, vuint8m1_t top, size_t shift) {
      const vuint8m1_t high = __riscv_vand_vx_u8m1(__riscv_vsrl_vx_u8m1(top, shift, vl), 4, vl);
      return as_levels(__riscv_vor_vv_u8m1(__riscv_vsrl_vx_u8m1(v, 6, vl), high, vl));
    };
    if constexpr (kCols == 1) {
      const vuint8m1_t b0 = row_bytes(q, 3 * m, vl), b1 = row_bytes(q, 3 * m + 1, vl), b2 = row_bytes(q, 3 * m + 2, vl);
      return __riscv_vcreate_v_i8m1x8(as_levels(low(b0, vl)), as_levels(mid(b0, vl)), as_levels(low(b1, vl)),
                                      as_levels(mid(b1, vl)), as_levels(low(b2, vl)), as_levels(mid(b2, vl)),
                                      split(b0, b2, 4), split(b1, b2, 5));
    } else {
      static_assert(kCols == 4);
      const size_t n = 3 * vl;  // the unit's 3 level-byte columns
      const vuint8m4_t b = load_bytes<4>(q + 3 * m * kPanelRows, n);
      const vuint8m1_t b2 = __riscv_vget_v_u8m4_u8m1(b, 2);
      vint8m1_t u6 = split(__riscv_vget_v_u8m4_u8m1(b, 0), b2, 4), u7 = split(__riscv_vget_v_u8m4_u8m1(b, 1), b2, 5);
      vint8m4_t lows = as_levels(low(b, n)), mids = as_levels(mid(b, n));
      asm("" : "+vr"(lows), "+vr"(mids), "+vr"(u6), "+vr"(u7));  // formed before their uses (NibbleStrips::unpack)
      return __riscv_vcreate_v_i8m1x8(__riscv_vget_v_i8m4_i8m1(lows, 0), __riscv_vget_v_i8m4_i8m1(mids, 0),
                                      __riscv_vget_v_i8m4_i8m1(lows, 1), __riscv_vget_v_i8m4_i8m1(mids, 1),
                                      __riscv_vget_v_i8m4_i8m1(lows, 2), __riscv_vget_v_i8m4_i8m1(mids, 2), u6, u7);
    }
  }
};

// IQ4_XS (pack_panel_iq4_xs_bytes): d, scales_h (2 bytes), scales_l (4 bytes) as stored (sub-block
// ib = g / 2: nibble ib % 2 of scales_l[ib / 2], bits 2ib, 2ib + 1 of scales_h above it, minus 32),
// then level byte j holds the table indices of elements 2j (low nibble) and 2j + 1 (high).
struct Iq4XsLevels {
  using Block = block_iq4_xs;
  static constexpr bool kMins = false;
  static constexpr int kScaleBytes = 6, kChain = 2, kBias = 0;
  static constexpr int kColumns = 4;  // a unit's 4 bytes: one LMUL 4 load at VLEN 256
  static vint16m2_t scale(const uint8_t* sb, int g, size_t vl) {
    const int ib = g / 2;
    return six_bit_scale(sb, 2 + ib / 2, 4 * (ib % 2), ib / 4, 2 * (ib % 4), vl);
  }
  template <int kCols>
  static vint8m1x8_t unit(const uint8_t* q, int m, size_t vl) {
    if constexpr (kCols == 1) {
      const auto level = [&](int j, bool high) {
        return __riscv_vget_v_i8m4_i8m1(iq4_levels<1>(row_bytes(q, 4 * m + j, vl), high, vl), 0);
      };
      return __riscv_vcreate_v_i8m1x8(level(0, false), level(0, true), level(1, false), level(1, true),
                                      level(2, false), level(2, true), level(3, false), level(3, true));
    } else {
      static_assert(kCols == 4);
      const Cols<4> bytes = load_columns<4>(q + 4 * m * kPanelRows, vl);
      vint8m4_t lo = iq4_levels<4>(bytes, false, 4 * vl), hi = iq4_levels<4>(bytes, true, 4 * vl);
      asm("" : "+vr"(lo), "+vr"(hi));  // formed before their uses, as in NibbleStrips::unpack
      return __riscv_vcreate_v_i8m1x8(__riscv_vget_v_i8m4_i8m1(lo, 0), __riscv_vget_v_i8m4_i8m1(hi, 0),
                                      __riscv_vget_v_i8m4_i8m1(lo, 1), __riscv_vget_v_i8m4_i8m1(hi, 1),
                                      __riscv_vget_v_i8m4_i8m1(lo, 2), __riscv_vget_v_i8m4_i8m1(hi, 2),
                                      __riscv_vget_v_i8m4_i8m1(lo, 3), __riscv_vget_v_i8m4_i8m1(hi, 3));
    }
  }
};

template <class H, class L>
struct LevelStrips : Q8KRows {
  // Products i .. 7 of a unit (levels lv, X rows' elements x0[i], x1[i]) into the chains c0, c1;
  // a chain is added times the group's scale sc into s0, s1 after every L::kChain products (p:
  // the product's index in the group), and starts from its first product unless `start` is false
  // (it already holds the bias term).
  template <int T, int p, int i = 0>
  static void mac_unit(vint32m4_t& s0, vint32m4_t& s1, vint16m2_t& c0, vint16m2_t& c1, vint8m1x8_t lv,
                       vint16m2_t sc, const int8_t* x0, const int8_t* x1, bool start, size_t vl) {
    const vint8m1_t w = __riscv_vget_v_i8m1x8_i8m1(lv, i);
    if (start && (p + i) % L::kChain == 0) {
      c0 = __riscv_vwmul_vx_i16m2(w, x0[i], vl);
      if constexpr (T > 1) c1 = __riscv_vwmul_vx_i16m2(w, x1[i], vl);
    } else {
      c0 = __riscv_vwmacc_vx_i16m2(c0, x0[i], w, vl);
      if constexpr (T > 1) c1 = __riscv_vwmacc_vx_i16m2(c1, x1[i], w, vl);
    }
    if constexpr ((p + i + 1) % L::kChain == 0) {
      s0 = __riscv_vwmacc_vv_i32m4(s0, sc, c0, vl);
      if constexpr (T > 1) s1 = __riscv_vwmacc_vv_i32m4(s1, sc, c1, vl);
    }
    if constexpr (i + 1 < 8) mac_unit<T, p, i + 1>(s0, s1, c0, c1, lv, sc, x0, x1, start, vl);
  }

  // y (+)= dx * (d * float(s) - dmin * float(n)) (no dmin term without mins): the first
  // super-block stores.
  static void update(float* y, float dx, vfloat32m4_t d, vfloat32m4_t dmin, vint32m4_t s, vint32m4_t n, bool first,
                     size_t vl) {
    vfloat32m4_t t = __riscv_vfmul_vv_f32m4(d, __riscv_vfcvt_f_x_v_f32m4(s, vl), vl);
    if constexpr (L::kMins) t = __riscv_vfnmsac_vv_f32m4(t, dmin, __riscv_vfcvt_f_x_v_f32m4(n, vl), vl);
    add_block(y, __riscv_vfmul_vf_f32m4(t, dx, vl), first, vl);
  }

  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    if constexpr (L::kColumns > 1)
      strip_by_columns<T>(*this, panel, r, vl, j, y);
    else
      strip_columns<T, 1>(panel, r, vl, j, y);
  }

  template <int T, int kCols>
  void strip_columns(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    static_assert(T >= 1 && T <= 2);
    constexpr int kHalves = L::kMins ? 2 : 1;
    constexpr size_t kColumn = sizeof(typename L::Block) * kPanelRows;
    const block_q8_K* x0 = xrow(j);
    const block_q8_K* x1 = xrow(j + T - 1);
    for (int64_t b = 0; b < nsb; b++) {
      const std::byte* column = panel + size_t(b) * kColumn;
      const auto* sb = reinterpret_cast<const uint8_t*>(column + 2 * kHalves * kPanelRows) + r;
      const uint8_t* q = sb + L::kScaleBytes * kPanelRows;
      const vint32m4_t zero = __riscv_vmv_v_x_i32m4(0, vl);
      vint32m4_t s0 = zero, s1 = zero, n0 = zero, n1 = zero;
      for (int g = 0; g < kLevelGroups; g++) {
        const vint16m2_t sc = L::scale(sb, g, vl);
        const int8_t* e0 = x0[b].qs + 16 * g;
        const int8_t* e1 = x1[b].qs + 16 * g;
        vint16m2_t c0, c1;
        if constexpr (L::kBias != 0) {
          c0 = __riscv_vmv_v_x_i16m2(int16_t(-L::kBias * x0[b].bsums[g]), vl);
          if constexpr (T > 1) c1 = __riscv_vmv_v_x_i16m2(int16_t(-L::kBias * x1[b].bsums[g]), vl);
        }
        mac_unit<T, 0>(s0, s1, c0, c1, L::template unit<kCols>(q, 2 * g, vl), sc, e0, e1, L::kBias == 0, vl);
        mac_unit<T, 8>(s0, s1, c0, c1, L::template unit<kCols>(q, 2 * g + 1, vl), sc, e0 + 8, e1 + 8, L::kBias == 0,
                       vl);
        if constexpr (L::kMins) {
          const vint16m2_t m = L::min(sb, g, vl);
          n0 = __riscv_vwmacc_vx_i32m4(n0, x0[b].bsums[g], m, vl);
          if constexpr (T > 1) n1 = __riscv_vwmacc_vx_i32m4(n1, x1[b].bsums[g], m, vl);
        }
      }
      const auto* d = reinterpret_cast<const uint16_t*>(column) + r;
      const vfloat32m4_t dw = H::scales(d, vl);
      const vfloat32m4_t dmin = L::kMins ? H::scales(d + kPanelRows, vl) : dw;
      update(y, x0[b].d, dw, dmin, s0, n0, b == 0, vl);
      if constexpr (T > 1) update(y + y_stride, x1[b].d, dw, dmin, s1, n1, b == 0, vl);
    }
  }
};

// PanelGemmFn of Q2_K / Q3_K / IQ4_XS panels against Q8_K activation rows.
template <class H, class L>
void gemm_level_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride,
                       const void* x, size_t x_stride, float* y, size_t y_stride, std::byte*) {
  const LevelStrips<H, L> s{{static_cast<const std::byte*>(x), x_stride, y_stride, n / QK_K}};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

}  // namespace
}  // namespace hart::cpu::riscv
