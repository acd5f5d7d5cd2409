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
// the level bytes of 4 columns are loaded and decoded by one LMUL 4 instruction each; at VLEN 128
// a single X row's strip is the whole panel (e8 LMUL 2 per column, 2 columns per LMUL 4
// instruction), which takes 0.54-0.58x the instructions of two 16-row strips decoding one column
// each (SmolLM2-135M decode: Q8_0 panels 45.3M -> 26.1M per token, Q5_0 40.5M -> 18.1M).
//
// Included by one translation unit per way of widening the fp16 weight scales, which passes H:
//   static vfloat32m4_t H::scales(const uint16_t* d, size_t vl)   vl fp16 scales -> f32, exact
#pragma once

#include <riscv_vector.h>

#include <type_traits>

#include "backend/cpu/arch/riscv/rvv_block32.h"
#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_panels_levels.h"  // the Q2_K / Q3_K / IQ4_XS panels registered below
#include "backend/cpu/arch/riscv/rvv_panels_q4_k.h"  // the Q4_K / Q5_K panels registered below
#include "backend/cpu/arch/riscv/rvv_panels_q6_k.h"  // the Q6_K panels registered below
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

// The activation rows' block scales as floats, dx[j * nb + b] (converted once per GEMM call
// rather than once per panel strip), in the GEMM's scratch (activation_scales_bytes).
inline size_t activation_scales_bytes(int64_t n, int64_t nx) { return size_t(nx * (n / QK8_0)) * sizeof(float); }
inline const float* activation_scales(const std::byte* x, size_t x_stride, int64_t nx, int64_t nb, std::byte* scratch) {
  auto* dx = reinterpret_cast<float*>(scratch);
  for (int64_t j = 0; j < nx; j++) {
    const auto* xb = reinterpret_cast<const block_q8_0*>(x + size_t(j) * x_stride);
    for (int64_t b = 0, vl; b < nb; b += vl) {
      vl = int64_t(__riscv_vsetvl_e16m1(size_t(nb - b)));
      __riscv_vse32_v_f32m2(dx + j * nb + b, load_fp16_field<block_q8_0>(&xb[b].d, size_t(vl)), size_t(vl));
    }
  }
  return dx;
}

// The vector types of a strip of the rows whose bytes of one panel column fill G registers: G = 1
// (e8 m1, int16 m2, int32 and f32 m4) for strips at e32 LMUL 4, G = 2 (e8 m2, int16 m4, int32 and
// f32 m8) for a whole 32-row panel at VLEN 128 (wide_rows), where G = 1 takes two 16-row strips
// and twice the instructions per column.
template <int G>
struct Lanes {
  static_assert(G == 1 || G == 2);
  using I8 = std::conditional_t<G == 1, vint8m1_t, vint8m2_t>;
  using I16 = std::conditional_t<G == 1, vint16m2_t, vint16m4_t>;
  using I32 = std::conditional_t<G == 1, vint32m4_t, vint32m8_t>;
  using F32 = std::conditional_t<G == 1, vfloat32m4_t, vfloat32m8_t>;

  // Column c of a group of levels (Cols).
  template <int c>
  static I8 column(vint8m4_t group) {
    if constexpr (G == 1)
      return __riscv_vget_v_i8m4_i8m1(group, c);
    else
      return __riscv_vget_v_i8m4_i8m2(group, c);
  }
  static I16 zero16(size_t vl) {
    if constexpr (G == 1)
      return __riscv_vmv_v_x_i16m2(0, vl);
    else
      return __riscv_vmv_v_x_i16m4(0, vl);
  }
  static I32 zero32(size_t vl) {
    if constexpr (G == 1)
      return __riscv_vmv_v_x_i32m4(0, vl);
    else
      return __riscv_vmv_v_x_i32m8(0, vl);
  }
  static F32 zerof(size_t vl) {
    if constexpr (G == 1)
      return __riscv_vfmv_v_f_f32m4(0.0f, vl);
    else
      return __riscv_vfmv_v_f_f32m8(0.0f, vl);
  }
  // vl fp16 scales as f32: H widens an e32 LMUL 4 group's lanes, so G = 2 takes two halves.
  template <class H>
  static F32 scales(const uint16_t* d, size_t vl) {
    if constexpr (G == 1) {
      return H::scales(d, vl);
    } else {
      const size_t half = __riscv_vsetvlmax_e32m4();
      const F32 low = __riscv_vset_v_f32m4_f32m8(__riscv_vundefined_f32m8(), 0, H::scales(d, half));
      return __riscv_vset_v_f32m4_f32m8(low, 1, H::scales(d + half, vl - half));
    }
  }
};

// The level sources of the 32-element block types: P::columns<kCols, G>(body, r, i, lo, hi, vl)
// sets column c < kCols of the group lo (hi) to the strip's rows' levels of element i + c
// (16 + i + c), for columns i .. i + kCols - 1 of a block column (body: its bytes after the 32
// fp16 scales; r: the strip's first row), column c in registers c * G .. c * G + G - 1 (Cols,
// rvv_panels_levels.h). kCols = 1 at every VLEN; 4 / G where an LMUL 4 group holds exactly that
// many whole columns (strip_by_columns: VLEN 256, and 128 with G = 2): then each load and op
// serves 4 / G columns.
// The row masks of kCols consecutive elements (32 bits each, the first at p) of a strip of vl rows
// whose column is G registers.
template <int kCols, int G>
inline auto load_masks(const uint8_t* p, size_t vl) {
  if constexpr (kCols * G == 1)
    return __riscv_vlm_v_b8(p, vl);
  else if constexpr (kCols * G == 2)
    return __riscv_vlm_v_b4(p, kCols * vl);
  else
    return __riscv_vlm_v_b2(p, kCols * vl);
}

// Q8_0 (pack_panel_q8_0_bytes): byte e is element e.
struct Q8Columns {
  using Block = block_q8_0;
  template <int kCols, int G>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const auto* q = reinterpret_cast<const uint8_t*>(body) + r;
    lo = as_group(load_columns<kCols, G>(q + i * kPanelRows, vl));
    hi = as_group(load_columns<kCols, G>(q + (16 + i) * kPanelRows, vl));
  }
};

// IQ4_NL (pack_panel_iq4_nl_bytes): byte i's nibbles index kIq4Levels for elements i and 16 + i.
struct Iq4NlColumns {
  using Block = block_iq4_nl;
  template <int kCols, int G>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const auto packed = load_columns<kCols, G>(reinterpret_cast<const uint8_t*>(body) + r + i * kPanelRows, vl);
    lo = iq4_levels<kCols * G>(packed, false, kCols * vl);
    hi = iq4_levels<kCols * G>(packed, true, kCols * vl);
  }
};

// Q4_0 packed with every byte ^ 0x88 (pack_panel_q4_0_bytes): each nibble, read as a 4-bit two's
// complement number, is its level - 8, so two shifts give the signed levels.
struct Q4Columns {
  using Block = block_q4_0;
  template <int kCols, int G>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    const auto packed = load_columns<kCols, G>(reinterpret_cast<const uint8_t*>(body) + r + i * kPanelRows, vl);
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
  template <int kCols, int G>
  static void columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
    constexpr size_t kMaskBytes = kPanelRows / 8;
    const auto* masks = reinterpret_cast<const uint8_t*>(body) + r / 8;  // r: a multiple of VLMAX >= 16
    const auto* q = reinterpret_cast<const uint8_t*>(body) + QK5_0 * kMaskBytes + r;
    const auto packed = load_columns<kCols, G>(q + i * kPanelRows, vl);
    const size_t n = kCols * vl;
    const auto nibble_minus_16 = [&](auto v, int e) {
      const auto s = as_levels(v);
      return as_group(__riscv_vsub_mu(load_masks<kCols, G>(masks + e * kMaskBytes, vl), s, s, 16, n));
    };
    lo = nibble_minus_16(__riscv_vand(packed, 0x0F, n), i);
    hi = nibble_minus_16(__riscv_vsrl(packed, 4, n), 16 + i);
  }
};

// P::columns, with the levels of several columns formed before any is used: left to itself the
// scheduler sinks each LMUL 4 op next to its first use, between the products of one column each,
// which costs two vtype changes (e8 m4 <-> m1 or m2) per op.
template <class P, int kCols, int G>
inline void form_columns(const std::byte* body, size_t r, int i, vint8m4_t& lo, vint8m4_t& hi, size_t vl) {
  P::template columns<kCols, G>(body, r, i, lo, hi, vl);
  if constexpr (kCols > 1) asm("" : "+vr"(lo), "+vr"(hi));
}

// How the products of a source's levels are summed exactly (Levels of Block32Strips):
// sums<T, kCols, G>(body, r, x0, x1, f0, f1, vl) sets f0 (f1) to sum_e W[r + i][e] * x0[e] (x1[e])
// in lane i < vl, as floats (Lanes<G>::F32).
//
// Q8_0 and IQ4_NL: levels of magnitude up to 128 (Q8_0) and 127 (kIq4Levels), so only a pair of
// products fits int16 (2 * 128 * 127 < 32768) and the sums go into int32 pair by pair (pair c:
// elements c and 16 + c).
//
// s0 (s1) += the products of pairs c .. kEnd - 1 of the unit at column i with X row 0 (1) at x0
// (x1): column c of lo, hi (kCols > 1), or formed here one pair at a time (kCols 1). All pairs
// are formed (SEW 8) before any is added into the int32 sums (SEW 16): two vtype changes per
// kEnd - c pairs.
template <class P, int T, int kCols, int G, int c, int kEnd>
inline void add_pairs(typename Lanes<G>::I32& s0, typename Lanes<G>::I32& s1, const std::byte* body, size_t r, int i,
                      vint8m4_t& lo, vint8m4_t& hi, const int8_t* x0, const int8_t* x1, size_t vl) {
  using L = Lanes<G>;
  if constexpr (kCols == 1) form_columns<P, 1, G>(body, r, i + c, lo, hi, vl);
  const typename L::I8 w0 = L::template column<kCols == 1 ? 0 : c>(lo);
  const typename L::I8 w1 = L::template column<kCols == 1 ? 0 : c>(hi);
  const auto times = [&](const int8_t* x) {
    return __riscv_vwmacc(__riscv_vwmul(w0, x[i + c], vl), x[16 + i + c], w1, vl);
  };
  const typename L::I16 p0 = times(x0);
  const typename L::I16 p1 = T > 1 ? times(x1) : p0;
  if constexpr (c + 1 < kEnd) add_pairs<P, T, kCols, G, c + 1, kEnd>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
  s0 = __riscv_vwadd_wv(s0, p0, vl);
  if constexpr (T > 1) s1 = __riscv_vwadd_wv(s1, p1, vl);
}

template <class P>
struct PairLevels {
  using Block = typename P::Block;

  // Pairs c .. kUnit - 1 of the unit at column i (kUnit: an LMUL 4 group's columns), kPairs per
  // vtype round trip (their int16 products fit 8 registers).
  template <int T, int kCols, int G, int c = 0>
  static void add_unit(typename Lanes<G>::I32& s0, typename Lanes<G>::I32& s1, const std::byte* body, size_t r,
                       int i, vint8m4_t& lo, vint8m4_t& hi, const int8_t* x0, const int8_t* x1, size_t vl) {
    constexpr int kUnit = 4 / G, kPairs = 4 / (T * G);
    add_pairs<P, T, kCols, G, c, c + kPairs>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
    // Both rows' sums are updated here, pair by pair: left to itself clang-19 forms all of X row
    // 0's products first and keeps every pair's levels for row 1 on the stack (about 40 vector
    // spills and reloads per block with Zvfh; none in the loop with this).
    if constexpr (T > 1) asm("" : "+vr"(s0), "+vr"(s1));
    if constexpr (c + kPairs < kUnit) add_unit<T, kCols, G, c + kPairs>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
  }

  // kCols > 1 with one X row only: two rows' products and int32 sums, their float accumulators
  // (Block32Strips) and a group's columns' levels (with IQ4_NL's table) would need more than 32
  // registers.
  template <int T, int kCols, int G>
  static void sums(const std::byte* body, size_t r, const int8_t* x0, const int8_t* x1, typename Lanes<G>::F32& f0,
                   typename Lanes<G>::F32& f1, size_t vl) {
    constexpr int kC = T == 1 ? kCols : 1, kUnit = 4 / G;
    typename Lanes<G>::I32 s0 = Lanes<G>::zero32(vl), s1 = s0;
#pragma GCC unroll 4
    for (int i = 0; i < QK8_0 / 2; i += kUnit) {
      vint8m4_t lo, hi;
      if constexpr (kC == kUnit) form_columns<P, kC, G>(body, r, i, lo, hi, vl);
      add_unit<T, kC, G>(s0, s1, body, r, i, lo, hi, x0, x1, vl);
    }
    f0 = __riscv_vfcvt_f(s0, vl);
    f1 = __riscv_vfcvt_f(s1, vl);
  }
};

// Q4_0 and Q5_0: levels -8..7 and -16..15, so 16 products fit an int16 chain (16 * 16 * 127 =
// 32512): elements 0..15 and 16..31 keep one chain each, added into int32 once per block.
template <class P>
struct ChainLevels {
  using Block = typename P::Block;

  // The chains lo_t (hi_t) += column c (c + 1, ...) of lo (hi) times X row t's element i + c
  // (16 + i + c), for the kCols - c columns left.
  template <int T, int kCols, int G, int c = 0, class I16 = typename Lanes<G>::I16>
  static void mac(I16& lo0, I16& hi0, I16& lo1, I16& hi1, vint8m4_t lo, vint8m4_t hi, const int8_t* x0,
                  const int8_t* x1, int i, size_t vl) {
    const auto wl = Lanes<G>::template column<c>(lo), wh = Lanes<G>::template column<c>(hi);
    lo0 = __riscv_vwmacc(lo0, x0[i + c], wl, vl);
    hi0 = __riscv_vwmacc(hi0, x0[16 + i + c], wh, vl);
    if constexpr (T > 1) {
      lo1 = __riscv_vwmacc(lo1, x1[i + c], wl, vl);
      hi1 = __riscv_vwmacc(hi1, x1[16 + i + c], wh, vl);
    }
    if constexpr (c + 1 < kCols) mac<T, kCols, G, c + 1>(lo0, hi0, lo1, hi1, lo, hi, x0, x1, i, vl);
  }

  template <int T, int kCols, int G>
  static void sums(const std::byte* body, size_t r, const int8_t* x0, const int8_t* x1, typename Lanes<G>::F32& f0,
                   typename Lanes<G>::F32& f1, size_t vl) {
    const typename Lanes<G>::I16 zero = Lanes<G>::zero16(vl);
    typename Lanes<G>::I16 lo0 = zero, hi0 = zero, lo1 = zero, hi1 = zero;
#pragma unroll(T == 1 ? 16 : 4)  // one row: fully, constant offsets; two: 4 (no spills)
    for (int i = 0; i < QK8_0 / 2; i += kCols) {
      vint8m4_t lo, hi;
      form_columns<P, kCols, G>(body, r, i, lo, hi, vl);
      mac<T, kCols, G>(lo0, hi0, lo1, hi1, lo, hi, x0, x1, i, vl);
    }
    f0 = __riscv_vfcvt_f(__riscv_vwadd_vv(lo0, hi0, vl), vl);
    f1 = __riscv_vfcvt_f(__riscv_vwadd_vv(lo1, hi1, vl), vl);
  }
};

// run_panels strips of a 32-element block type (Levels: PairLevels, ChainLevels) against Q8_0
// rows; one X row's strips take the whole panel at VLEN 128 (kWideT, G = 2).
template <class H, class Levels>
struct Block32Strips {
  static constexpr int kMaxT = 2, kWideT = 1;
  const std::byte* x;
  size_t x_stride, y_stride;
  const float* dx;  // activation_scales
  int64_t nb;       // blocks per row

  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    strip_by_columns<T>(*this, panel, r, vl, j, y);
  }

  template <int T, int kCols, int G = 1>
  void strip_columns(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    using F32 = typename Lanes<G>::F32;
    constexpr size_t kColumn = sizeof(typename Levels::Block) * kPanelRows;
    const F32 zero = Lanes<G>::zerof(vl);
    F32 a0 = zero, a1 = zero;
    const auto* x0 = reinterpret_cast<const block_q8_0*>(x + size_t(j) * x_stride);
    const auto* x1 = reinterpret_cast<const block_q8_0*>(x + size_t(j + T - 1) * x_stride);
    for (int64_t b = 0; b < nb; b++) {
      const std::byte* column = panel + size_t(b) * kColumn;
      F32 s0, s1;
      Levels::template sums<T, kCols, G>(column + 2 * kPanelRows, r, x0[b].qs, x1[b].qs, s0, s1, vl);
      // acc += dw * dx[j][b] * sums
      const F32 dw = Lanes<G>::template scales<H>(reinterpret_cast<const uint16_t*>(column) + r, vl);
      a0 = __riscv_vfmacc(a0, dx[j * nb + b], __riscv_vfmul(dw, s0, vl), vl);
      if constexpr (T > 1) a1 = __riscv_vfmacc(a1, dx[(j + 1) * nb + b], __riscv_vfmul(dw, s1, vl), vl);
    }
    __riscv_vse32(y, a0, vl);
    if constexpr (T > 1) __riscv_vse32(y + y_stride, a1, vl);
  }
};

// PanelGemmFn of a 32-element block type's panels against Q8_0 activation rows.
template <class H, class Levels>
void gemm_block32_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride,
                         const void* x, size_t x_stride, float* y, size_t y_stride, std::byte* scratch) {
  const auto* xb = static_cast<const std::byte*>(x);
  const int64_t nb = n / QK8_0;
  const Block32Strips<H, Levels> s{xb, x_stride, y_stride, activation_scales(xb, x_stride, nx, nb, scratch), nb};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

template <class H>
void fill_quant_panels(Kernels& k) {
  auto block32 = [&](Type t, PackFn pack, PanelGemmFn gemm) {
    k.panel[uint32_t(t)] = {kPanelRows, pack, gemm, activation_scales_bytes};
  };
  block32(Type::Q8_0, pack_panel_q8_0_bytes, gemm_block32_panels<H, PairLevels<Q8Columns>>);
  block32(Type::Q4_0, pack_panel_q4_0_bytes, gemm_block32_panels<H, ChainLevels<Q4Columns>>);
  block32(Type::Q5_0, pack_panel_q5_0_masks, gemm_block32_panels<H, ChainLevels<Q5Columns>>);
  block32(Type::IQ4_NL, pack_panel_iq4_nl_bytes, gemm_block32_panels<H, PairLevels<Iq4NlColumns>>);
  k.panel[uint32_t(Type::Q4_K)] = {kPanelRows, pack_panel_q4_K_bytes, gemm_nibble_panels<H, Q4KNibbles>,
                                   activation_sub_sums_bytes};
  k.panel[uint32_t(Type::Q5_K)] = {kPanelRows, pack_panel_q5_K_masks, gemm_nibble_panels<H, Q5KNibbles>,
                                   activation_sub_sums_bytes};
  k.panel[uint32_t(Type::Q6_K)] = {kPanelRows, pack_panel_q6_K_bytes, gemm_q6_K_panels<H>};
  k.panel[uint32_t(Type::Q2_K)] = {kPanelRows, pack_panel_q2_K_bytes, gemm_level_panels<H, Q2KLevels>};
  k.panel[uint32_t(Type::Q3_K)] = {kPanelRows, pack_panel_q3_K_bytes, gemm_level_panels<H, Q3KLevels>};
  k.panel[uint32_t(Type::IQ4_XS)] = {kPanelRows, pack_panel_iq4_xs_bytes, gemm_level_panels<H, Iq4XsLevels>};
}

}  // namespace
}  // namespace hart::cpu::riscv
