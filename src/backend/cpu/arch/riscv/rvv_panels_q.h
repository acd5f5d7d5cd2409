// MUL_MAT on Q8_0, Q4_0, Q5_0 and IQ4_NL weights repacked into 32-row byte panels (repack.h,
// "_bytes": per block column the 32 fp16 scales, then byte j of the 32 rows as 32 consecutive
// bytes) against Q8_0 activations. Byte j of a panel is one e8 vector whose lane r belongs to row
// r: its levels times the activation's scalar element (vwmul.vx / vwmacc.vx) update the 32 rows'
// integer block sums lane by lane, with no reduction. Each block's integer sums are converted and
// scaled once (dw lanes x the activation row's dx). Same strips as the float panels (run_panels).
//
// Integer ranges: activations are Q8_0 (|x| <= 127); Q8_0 weights |w| <= 128 and IQ4_NL levels
// |w| <= 127, so a pair of products fits int16 (2 * 128 * 127 < 32768) and pairs add into int32;
// Q4_0 and Q5_0 levels are -8..7 and -16..15, so each half block's 16 products fit an int16 chain
// (16 * 16 * 127 = 32512). The sums are exact, as in the row dots (rvv_block32.h). At VLEN 256
// the level bytes of 4 columns are loaded and decoded by one LMUL 4 instruction each.
//
// Included by one translation unit per way of widening the fp16 weight scales, which passes H:
//   static vfloat32m4_t H::scales(const uint16_t* d, size_t vl)   vl fp16 scales -> f32, exact
#pragma once

#include <riscv_vector.h>

#include "backend/cpu/arch/riscv/rvv_block32.h"
#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_panels_levels.h"  // the Q2_K / Q3_K / IQ4_XS panels registered below
#include "backend/cpu/arch/riscv/rvv_panels_q4_k.h"  // the Q4_K / Q5_K panels registered below
#include "backend/cpu/arch/riscv/rvv_panels_q6_k.h"  // the Q6_K panels registered below
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

// The activation rows' block scales as floats, dx[j * nb + b] (converted once per GEMM call
// rather than once per panel strip), in the calling thread's panel scratch.
inline const float* activation_scales(const std::byte* x, size_t x_stride, int64_t nx, int64_t nb) {
  auto* dx = reinterpret_cast<float*>(panel_scratch(size_t(nx * nb) * sizeof(float)));
  for (int64_t j = 0; j < nx; j++) {
    const auto* xb = reinterpret_cast<const block_q8_0*>(x + size_t(j) * x_stride);
    for (int64_t b = 0, vl; b < nb; b += vl) {
      vl = int64_t(__riscv_vsetvl_e16m1(size_t(nb - b)));
      __riscv_vse32_v_f32m2(dx + j * nb + b, load_fp16_field<block_q8_0>(&xb[b].d, size_t(vl)), size_t(vl));
    }
  }
  return dx;
}

// The level sources of the 32-element block types: P::columns<kCols>(body, r, i, lo, hi, vl) sets
// register c < kCols of lo (hi) to the strip's rows' levels of element i + c (16 + i + c), for
// columns i .. i + kCols - 1 of a block column (body: its bytes after the 32 fp16 scales; r: the
// strip's first row). kCols = 1 at every VLEN; 4 where a vector register holds exactly one panel
// column (strip_by_columns, VLEN 256): then each load and op serves 4 columns at LMUL 4
// (Cols<kCols>, rvv_panels_levels.h).
// kCols consecutive row masks (32 bits each), the first at p.
template <int kCols>
inline auto load_masks(const uint8_t* p, size_t vl) {
  if constexpr (kCols == 1)
    return __riscv_vlm_v_b8(p, vl);
  else
    return __riscv_vlm_v_b2(p, kCols * vl);
}

// Q8_0 (pack_panel_q8_0_bytes): byte e is element e.
struct Q8Columns {
  using Block = block_q8_0;
  template <int kCols>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const auto* q = reinterpret_cast<const uint8_t*>(body) + r;
    lo = as_group(load_columns<kCols>(q + i * kPanelRows, vl));
    hi = as_group(load_columns<kCols>(q + (16 + i) * kPanelRows, vl));
  }
};

// IQ4_NL (pack_panel_iq4_nl_bytes): byte i's nibbles index kIq4Levels for elements i and 16 + i.
struct Iq4NlColumns {
  using Block = block_iq4_nl;
  template <int kCols>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const Cols<kCols> packed = load_columns<kCols>(reinterpret_cast<const uint8_t*>(body) + r + i * kPanelRows, vl);
    lo = iq4_levels<kCols>(packed, false, vl);
    hi = iq4_levels<kCols>(packed, true, vl);
  }
};

// Q4_0 packed with every byte ^ 0x88 (pack_panel_q4_0_bytes): each nibble, read as a 4-bit two's
// complement number, is its level - 8, so two shifts give the signed levels.
struct Q4Columns {
  using Block = block_q4_0;
  template <int kCols>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const Cols<kCols> packed = load_columns<kCols>(reinterpret_cast<const uint8_t*>(body) + r + i * kPanelRows, vl);
    const size_t n = kCols * vl;
    const auto v = as_levels(packed);
    lo = as_group(__riscv_vsra(__riscv_vsll(v, 4, n), 4, n));
    hi = as_group(__riscv_vsra(v, 4, n));
  }
};

// Q5_0 (pack_panel_q5_0_masks): after the scales, for each element e a 32-bit row mask (bit r set
// where row r's fifth bit of e is clear), then the qs bytes. A level is nibble + 16 * bit - 16:
// the nibble minus 16 in the lanes the element's mask selects (vlm, one masked subtract); the
// masks of kCols consecutive elements are consecutive.
struct Q5Columns {
  using Block = block_q5_0;
  template <int kCols>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    constexpr size_t kMaskBytes = kPanelRows / 8;
    const auto* masks = reinterpret_cast<const uint8_t*>(body) + r / 8;  // r: a multiple of VLMAX >= 16
    const auto* q = reinterpret_cast<const uint8_t*>(body) + QK5_0 * kMaskBytes + r;
    const Cols<kCols> packed = load_columns<kCols>(q + i * kPanelRows, vl);
    const size_t n = kCols * vl;
    const auto nibble_minus_16 = [&](auto v, int e) {
      const auto s = as_levels(v);
      return as_group(__riscv_vsub_mu(load_masks<kCols>(masks + e * kMaskBytes, vl), s, s, 16, n));
    };
    lo = nibble_minus_16(__riscv_vand(packed, 0x0F, n), i);
    hi = nibble_minus_16(__riscv_vsrl(packed, 4, n), 16 + i);
  }
};

// P::columns, with the levels of 4 columns formed before any is used: left to itself the scheduler
// sinks each LMUL 4 op next to its first use, between the LMUL 1 products, which costs two vtype
// changes (e8 m4 <-> m1) per op.
template <class P, int kCols>
inline void form_columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
  P::template columns<kCols>(body, r, i, lo, hi, vl);
  if constexpr (kCols > 1) asm("" : "+vr"(lo), "+vr"(hi));
}

// How the products of a source's levels are summed exactly (Levels of Block32Strips):
// sums<T, kCols>(body, r, x0, x1, f0, f1, vl) sets f0 (f1) to sum_e W[r + i][e] * x0[e] (x1[e])
// in lane i < vl, as floats.
//
// Q8_0 and IQ4_NL: levels of magnitude up to 128 (Q8_0) and 127 (kIq4Levels), so only a pair of
// products fits int16 (2 * 128 * 127 < 32768) and the sums go into int32 pair by pair (pair c:
// elements c and 16 + c).
//
// s0 (s1) += the products of pairs c .. kEnd - 1 of the unit of 4 at column i with X row 0 (1)
// at x0 (x1): register c of lo, hi (kCols 4), or formed here one pair at a time (kCols 1). All
// pairs are formed (SEW 8) before any is added into the int32 sums (SEW 16): two vtype changes per
// kEnd - c pairs.
template <class P, int T, int kCols, int c, int kEnd>
inline void add_pairs(vint32m4_t& s0, vint32m4_t& s1, const std::byte* body, size_t r, int i, vint8m4_t& lo,
                      vint8m4_t& hi, const int8_t* x0, const int8_t* x1, size_t vl) {
  if constexpr (kCols == 1) form_columns<P, 1>(body, r, i + c, lo, hi, vl);
  const vint8m1_t w0 = __riscv_vget_v_i8m4_i8m1(lo, kCols == 1 ? 0 : c);
  const vint8m1_t w1 = __riscv_vget_v_i8m4_i8m1(hi, kCols == 1 ? 0 : c);
  const auto times = [&](const int8_t* x) {
    return __riscv_vwmacc_vx_i16m2(__riscv_vwmul_vx_i16m2(w0, x[i + c], vl), x[16 + i + c], w1, vl);
  };
  const vint16m2_t p0 = times(x0);
  const vint16m2_t p1 = T > 1 ? times(x1) : p0;
  if constexpr (c + 1 < kEnd) add_pairs<P, T, kCols, c + 1, kEnd>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
  s0 = __riscv_vwadd_wv_i32m4(s0, p0, vl);
  if constexpr (T > 1) s1 = __riscv_vwadd_wv_i32m4(s1, p1, vl);
}

template <class P>
struct PairLevels {
  using Block = typename P::Block;
  static constexpr int kUnit = 4;  // pairs per unit: one LMUL 4 group's columns

  // Pairs c .. kUnit - 1 of the unit at column i, kPairs per vtype round trip (the int16 products
  // fit 8 registers).
  template <int T, int kCols, int c = 0>
  static void add_unit(vint32m4_t& s0, vint32m4_t& s1, const std::byte* body, size_t r, int i, vint8m4_t& lo,
                       vint8m4_t& hi, const int8_t* x0, const int8_t* x1, size_t vl) {
    constexpr int kPairs = 4 / T;
    add_pairs<P, T, kCols, c, c + kPairs>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
    // Both rows' sums are updated here, pair by pair: left to itself clang-19 forms all of X row
    // 0's products first and keeps every pair's levels for row 1 on the stack (about 40 vector
    // spills and reloads per block with Zvfh; none in the loop with this).
    if constexpr (T > 1) asm("" : "+vr"(s0), "+vr"(s1));
    if constexpr (c + kPairs < kUnit) add_unit<T, kCols, c + kPairs>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
  }

  // kCols 4 with one X row only: two rows' products and int32 sums, their float accumulators
  // (Block32Strips) and 4 columns' levels (with IQ4_NL's table) would need more than 32 registers.
  template <int T, int kCols>
  static void sums(const std::byte* body, size_t r, const int8_t* x0, const int8_t* x1, vfloat32m4_t& f0,
                   vfloat32m4_t& f1, size_t vl) {
    constexpr int kC = T == 1 ? kCols : 1;
    vint32m4_t s0 = __riscv_vmv_v_x_i32m4(0, vl), s1 = s0;
#pragma GCC unroll 4
    for (int i = 0; i < QK8_0 / 2; i += kUnit) {
      vint8m4_t lo, hi;
      if constexpr (kC == kUnit) form_columns<P, kC>(body, r, i, lo, hi, vl);
      add_unit<T, kC>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
    }
    f0 = __riscv_vfcvt_f_x_v_f32m4(s0, vl);
    f1 = __riscv_vfcvt_f_x_v_f32m4(s1, vl);
  }
};

// Q4_0 and Q5_0: levels -8..7 and -16..15, so 16 products fit an int16 chain (16 * 16 * 127 =
// 32512): elements 0..15 and 16..31 keep one chain each, added into int32 once per block.
template <class P>
struct ChainLevels {
  using Block = typename P::Block;

  // The chains lo_t (hi_t) += register c (c + 1, ...) of lo (hi) times X row t's element i + c
  // (16 + i + c), for the kCols - c columns left.
  template <int T, int kCols, int c = 0>
  static void mac(vint16m2_t& lo0, vint16m2_t& hi0, vint16m2_t& lo1, vint16m2_t& hi1, vint8m4_t lo, vint8m4_t hi,
                  const int8_t* x0, const int8_t* x1, int i, size_t vl) {
    const vint8m1_t wl = __riscv_vget_v_i8m4_i8m1(lo, c), wh = __riscv_vget_v_i8m4_i8m1(hi, c);
    lo0 = __riscv_vwmacc_vx_i16m2(lo0, x0[i + c], wl, vl);
    hi0 = __riscv_vwmacc_vx_i16m2(hi0, x0[16 + i + c], wh, vl);
    if constexpr (T > 1) {
      lo1 = __riscv_vwmacc_vx_i16m2(lo1, x1[i + c], wl, vl);
      hi1 = __riscv_vwmacc_vx_i16m2(hi1, x1[16 + i + c], wh, vl);
    }
    if constexpr (c + 1 < kCols) mac<T, kCols, c + 1>(lo0, hi0, lo1, hi1, lo, hi, x0, x1, i, vl);
  }

  template <int T, int kCols>
  static void sums(const std::byte* body, size_t r, const int8_t* x0, const int8_t* x1, vfloat32m4_t& f0,
                   vfloat32m4_t& f1, size_t vl) {
    const vint16m2_t zero = __riscv_vmv_v_x_i16m2(0, vl);
    vint16m2_t lo0 = zero, hi0 = zero, lo1 = zero, hi1 = zero;
#pragma unroll(T == 1 ? 16 : 4)  // one row: fully, constant offsets; two: 4 (no spills)
    for (int i = 0; i < QK8_0 / 2; i += kCols) {
      vint8m4_t lo, hi;
      form_columns<P, kCols>(body, r, i, lo, hi, vl);
      mac<T, kCols>(lo0, hi0, lo1, hi1, lo, hi, x0, x1, i, vl);
    }
    f0 = __riscv_vfcvt_f_x_v_f32m4(__riscv_vwadd_vv_i32m4(lo0, hi0, vl), vl);
    f1 = __riscv_vfcvt_f_x_v_f32m4(__riscv_vwadd_vv_i32m4(lo1, hi1, vl), vl);
  }
};

// run_panels strips of a 32-element block type (Levels: PairLevels, ChainLevels) against Q8_0
// rows.
template <class H, class Levels>
struct Block32Strips {
  static constexpr int kMaxT = 2;
  const std::byte* x;
  size_t x_stride, y_stride;
  const float* dx;  // activation_scales
  int64_t nb;       // blocks per row

  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    strip_by_columns<T>(*this, panel, r, vl, j, y);
  }

  template <int T, int kCols>
  void strip_columns(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    constexpr size_t kColumn = sizeof(typename Levels::Block) * kPanelRows;
    const vfloat32m4_t zero = __riscv_vfmv_v_f_f32m4(0.0f, vl);
    vfloat32m4_t a0 = zero, a1 = zero;
    const auto* x0 = reinterpret_cast<const block_q8_0*>(x + size_t(j) * x_stride);
    const auto* x1 = reinterpret_cast<const block_q8_0*>(x + size_t(j + T - 1) * x_stride);
    for (int64_t b = 0; b < nb; b++) {
      const std::byte* column = panel + size_t(b) * kColumn;
      vfloat32m4_t s0, s1;
      Levels::template sums<T, kCols>(column + 2 * kPanelRows, r, x0[b].qs, x1[b].qs, s0, s1, vl);
      // acc += dw * dx[j][b] * sums
      const vfloat32m4_t dw = H::scales(reinterpret_cast<const uint16_t*>(column) + r, vl);
      a0 = __riscv_vfmacc_vf_f32m4(a0, dx[j * nb + b], __riscv_vfmul_vv_f32m4(dw, s0, vl), vl);
      if constexpr (T > 1) a1 = __riscv_vfmacc_vf_f32m4(a1, dx[(j + 1) * nb + b], __riscv_vfmul_vv_f32m4(dw, s1, vl), vl);
    }
    __riscv_vse32_v_f32m4(y, a0, vl);
    if constexpr (T > 1) __riscv_vse32_v_f32m4(y + y_stride, a1, vl);
  }
};

// PanelGemmFn of a 32-element block type's panels against Q8_0 activation rows.
template <class H, class Levels>
void gemm_block32_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride,
                         const void* x, size_t x_stride, float* y, size_t y_stride) {
  const auto* xb = static_cast<const std::byte*>(x);
  const int64_t nb = n / QK8_0;
  const Block32Strips<H, Levels> s{xb, x_stride, y_stride, activation_scales(xb, x_stride, nx, nb), nb};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

template <class H>
void fill_quant_panels(Kernels& k) {
  k.panel[uint32_t(Type::Q8_0)] = {kPanelRows, pack_panel_q8_0_bytes, gemm_block32_panels<H, PairLevels<Q8Columns>>};
  k.panel[uint32_t(Type::Q4_0)] = {kPanelRows, pack_panel_q4_0_bytes, gemm_block32_panels<H, ChainLevels<Q4Columns>>};
  k.panel[uint32_t(Type::Q5_0)] = {kPanelRows, pack_panel_q5_0_masks, gemm_block32_panels<H, ChainLevels<Q5Columns>>};
  k.panel[uint32_t(Type::IQ4_NL)] =
      {kPanelRows, pack_panel_iq4_nl_bytes, gemm_block32_panels<H, PairLevels<Iq4NlColumns>>};
  k.panel[uint32_t(Type::Q4_K)] = {kPanelRows, pack_panel_q4_K_bytes, gemm_nibble_panels<H, Q4KNibbles>};
  k.panel[uint32_t(Type::Q5_K)] = {kPanelRows, pack_panel_q5_K_masks, gemm_nibble_panels<H, Q5KNibbles>};
  k.panel[uint32_t(Type::Q6_K)] = {kPanelRows, pack_panel_q6_K_bytes, gemm_q6_K_panels<H>};
  k.panel[uint32_t(Type::Q2_K)] = {kPanelRows, pack_panel_q2_K_bytes, gemm_level_panels<H, Q2KLevels>};
  k.panel[uint32_t(Type::Q3_K)] = {kPanelRows, pack_panel_q3_K_bytes, gemm_level_panels<H, Q3KLevels>};
  k.panel[uint32_t(Type::IQ4_XS)] = {kPanelRows, pack_panel_iq4_xs_bytes, gemm_level_panels<H, Iq4XsLevels>};
}

}  // namespace
}  // namespace hart::cpu::riscv
