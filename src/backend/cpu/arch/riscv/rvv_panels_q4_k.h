// MUL_MAT on Q4_K and Q5_K weights repacked into 32-row byte panels (repack.h, Q4_K "_bytes",
// Q5_K "_masks") against Q8_K activations; included by rvv_panels_q.h, which registers them with
// the other quantized panels. One strip template (NibbleStrips) serves both: a traits class L
// states what Q5_K adds, the fifth bit. Per super-block column: fp16 d[32], dmin[32], the 12
// scale bytes of the 32 rows, (Q5_K) a 32-row mask per element, then qs byte 32g + l of the rows,
// whose low nibble is element 64g + l (sub-block 2g) and high nibble element 64g + 32 + l
// (sub-block 2g + 1). Byte j of the rows is one e8 vector (lane = row) times the activation's
// scalar element, so each lane sums its own row. Per row and super-block:
//   y += dx * (d * sum_s sc_s * sum_{i in s} q_i x_i  -  dmin * sum_s m_s * (bsums[2s] + bsums[2s + 1]))
// with the 6-bit sc_s, m_s unpacked from the scale bytes by e8 ops for all rows at once.
//
// Integer ranges: |x| <= 128, levels 0..15 (Q4_K) or 0..31 (Q5_K), so a chain of L::kChain
// products (16 * 15 * 128 = 30720, 8 * 31 * 128 = 31744) fits int16: each sub-block is chains
// of L::kChain columns, each added times sc_s into int32 (vwmacc.vv); a super-block's sums are
// exact in int32 (< 8 * 63 * 32 * 31 * 128 < 2^31) and are converted and scaled once. H widens
// fp16 as in rvv_panels_q.h (H::scales).
#pragma once

#include <riscv_vector.h>

#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/repack.h"
#include "quant/blocks.h"

namespace hart::cpu::riscv {
namespace {

constexpr int kSubBlocks = QK_K / 32;

// The activation rows' sums per 32-element sub-block, bsums[2s] + bsums[2s + 1], at
// [(j * nsb + b) * kSubBlocks + s] (|sum| <= 32 * 128: int16), once per GEMM call rather than once
// per panel strip, in the GEMM's scratch (activation_sub_sums_bytes).
inline size_t activation_sub_sums_bytes(int64_t n, int64_t nx) {
  return size_t(nx * (n / QK_K) * kSubBlocks) * sizeof(int16_t);
}
inline const int16_t* activation_sub_sums(const std::byte* x, size_t x_stride, int64_t nx, int64_t nsb,
                                          std::byte* scratch) {
  auto* out = reinterpret_cast<int16_t*>(scratch);
  const size_t vl = __riscv_vsetvl_e16m1(kSubBlocks);  // 8 lanes fit VLEN 128
  for (int64_t j = 0; j < nx; j++) {
    const auto* xb = reinterpret_cast<const block_q8_K*>(x + size_t(j) * x_stride);
    for (int64_t b = 0; b < nsb; b++) {
      const int16_t* bs = xb[b].bsums;
      const vint16m1_t even = __riscv_vlse16_v_i16m1(bs, 2 * sizeof(int16_t), vl);
      const vint16m1_t odd = __riscv_vlse16_v_i16m1(bs + 1, 2 * sizeof(int16_t), vl);
      __riscv_vse16_v_i16m1(out + (j * nsb + b) * kSubBlocks, __riscv_vadd_vv_i16m1(even, odd, vl), vl);
    }
  }
  return out;
}

// Sub-block s's 6-bit scale (kMin false) or min (kMin true) of the rows, from their scale bytes
// (byte i of the rows at bytes + i * kPanelRows), as int16 lanes: for s < 4 the low 6 bits of byte
// s (scale) / s + 4 (min); for s >= 4 a nibble of byte s + 4 (low: scale, high: min) with the top
// 2 bits of byte s - 4 (scale) / s (min) above it.
template <bool kMin>
inline vint16m2_t scale_or_min(const uint8_t* bytes, int s, size_t vl) {
  const auto byte = [&](int i) { return __riscv_vle8_v_u8m1(bytes + i * kPanelRows, vl); };
  vuint8m1_t v;
  if (s < 4) {
    v = __riscv_vand_vx_u8m1(byte(kMin ? s + 4 : s), 63, vl);
  } else {
    const vuint8m1_t b = byte(s + 4);
    const vuint8m1_t lo = kMin ? __riscv_vsrl_vx_u8m1(b, 4, vl) : __riscv_vand_vx_u8m1(b, 0xF, vl);
    const vuint8m1_t top = __riscv_vand_vx_u8m1(__riscv_vsrl_vx_u8m1(byte(kMin ? s : s - 4), 2, vl), 0x30, vl);
    v = __riscv_vor_vv_u8m1(lo, top, vl);
  }
  return __riscv_vreinterpret_v_u16m2_i16m2(__riscv_vzext_vf2_u16m2(v, vl));
}

// s.strip_columns<T, 4> when a vector register holds exactly one panel column (vl == vlenb ==
// kPanelRows, VLEN 256: 4 columns per e8 LMUL 4 instruction), else s.strip_columns<T, 1>; a strip
// wider than a register (VLEN 128, the whole panel for S's X rows up to wide_rows<S>()) takes
// s.strip_columns<T, 2, 2>: 2 registers per column, 2 columns per e8 LMUL 4 instruction.
template <int T, class S>
inline void strip_by_columns(const S& s, const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) {
  static_assert(T >= 1 && T <= 2);
  const size_t vlenb = __riscv_vsetvlmax_e8m1();
  if constexpr (T <= wide_rows<S>()) {
    if (vl > vlenb) return s.template strip_columns<T, 2, 2>(panel, r, vl, j, y);  // vl == kPanelRows == 2 * vlenb
  }
  if (vl == kPanelRows && vlenb == kPanelRows)
    s.template strip_columns<T, 4>(panel, r, vl, j, y);
  else
    s.template strip_columns<T, 1>(panel, r, vl, j, y);
}

// What the run_panels strips against Q8_K activation rows share: the X rows, up to 2 per strip.
struct Q8KRows {
  static constexpr int kMaxT = 2;
  const std::byte* x;
  size_t x_stride, y_stride;
  int64_t nsb;  // super-blocks per row

  const block_q8_K* xrow(int64_t j) const { return reinterpret_cast<const block_q8_K*>(x + size_t(j) * x_stride); }
};

// Q4_K (pack_panel_q4_K_bytes): the levels are the nibbles.
struct Q4KNibbles {
  using Block = block_q4_K;
  static constexpr int kChain = 16;         // columns per int16 chain
  static constexpr size_t kMaskBytes = 0;   // bytes between the scale bytes and qs, per row
  template <int kCols>
  static void fifth_bit(const uint8_t*, int, vuint8m4_t&, vuint8m4_t&, size_t) {}
};

// Q5_K (pack_panel_q5_K_masks): level = nibble | 16 in the lanes of the element's row mask (one
// vlm and one masked vor per nibble side of kCols columns, whose masks are consecutive).
struct Q5KNibbles {
  using Block = block_q5_K;
  static constexpr int kChain = 8;
  static constexpr size_t kRowMask = kPanelRows / 8;  // bytes per element's row mask
  static constexpr size_t kMaskBytes = QK_K * kRowMask;
  // lo, hi: kCols columns unpacked (NibbleStrips::unpack) whose first low nibble is element e
  // (its high nibble: e + 32); masks: the strip's first byte of element 0's mask.
  template <int kCols>
  static void fifth_bit(const uint8_t* masks, int e, vuint8m4_t& lo, vuint8m4_t& hi, size_t vl) {
    const auto add = [&](vuint8m4_t& v, int elem) {
      const uint8_t* m = masks + size_t(elem) * kRowMask;
      if constexpr (kCols == 1) {
        const vuint8m1_t v1 = __riscv_vlmul_trunc_v_u8m4_u8m1(v);
        v = __riscv_vlmul_ext_v_u8m1_u8m4(__riscv_vor_vx_u8m1_mu(__riscv_vlm_v_b8(m, vl), v1, v1, 16, vl));
      } else {
        v = __riscv_vor_vx_u8m4_mu(__riscv_vlm_v_b2(m, kCols * vl), v, v, 16, kCols * vl);
      }
    };
    add(lo, e);
    add(hi, e + 32);
  }
};

template <class H, class L>
struct NibbleStrips : Q8KRows {
  const int16_t* sub_sums;  // activation_sub_sums

  // kCols consecutive qs columns from q (their first low nibble: element e), unpacked with
  // L::fifth_bit: the low (high) nibbles' levels of column i in register i of lo (hi). kCols = 4
  // needs a vector register to hold exactly one panel column (vlenb == vl == kPanelRows, VLEN
  // 256): then each load and op serves 4 columns.
  template <int kCols>
  static void unpack(const uint8_t* q, const uint8_t* masks, int e, vuint8m4_t& lo, vuint8m4_t& hi, size_t vl) {
    if constexpr (kCols == 1) {
      const vuint8m1_t packed = __riscv_vle8_v_u8m1(q, vl);
      lo = __riscv_vlmul_ext_v_u8m1_u8m4(__riscv_vand_vx_u8m1(packed, 0xF, vl));
      hi = __riscv_vlmul_ext_v_u8m1_u8m4(__riscv_vsrl_vx_u8m1(packed, 4, vl));
      L::template fifth_bit<kCols>(masks, e, lo, hi, vl);
    } else {
      static_assert(kCols == 4);
      const vuint8m4_t packed = __riscv_vle8_v_u8m4(q, kCols * vl);
      lo = __riscv_vand_vx_u8m4(packed, 0xF, kCols * vl);
      hi = __riscv_vsrl_vx_u8m4(packed, 4, kCols * vl);
      L::template fifth_bit<kCols>(masks, e, lo, hi, vl);
      // Both sides are formed here, before their uses: left to itself the scheduler sinks each
      // next to its first use, which costs two more vtype changes (e8 m4 <-> m1) per 4 columns.
      asm("" : "+vr"(lo), "+vr"(hi));
    }
  }

  // The chains lo_t (hi_t) += unpacked column c (c + 1, ...) times X row t's element e (e + 32),
  // for the kCols - c columns left; `start` sets the chains from the first product instead.
  template <int T, int kCols, int c = 0>
  static void mac_columns(vint16m2_t& lo0, vint16m2_t& hi0, vint16m2_t& lo1, vint16m2_t& hi1, vuint8m4_t los,
                          vuint8m4_t his, const int8_t* x0, const int8_t* x1, int e, bool start, size_t vl) {
    const vint8m1_t lo = __riscv_vreinterpret_v_u8m1_i8m1(__riscv_vget_v_u8m4_u8m1(los, c));
    const vint8m1_t hi = __riscv_vreinterpret_v_u8m1_i8m1(__riscv_vget_v_u8m4_u8m1(his, c));
    if (start && c == 0) {
      lo0 = __riscv_vwmul_vx_i16m2(lo, x0[e], vl);
      hi0 = __riscv_vwmul_vx_i16m2(hi, x0[e + 32], vl);
      if constexpr (T > 1) lo1 = __riscv_vwmul_vx_i16m2(lo, x1[e], vl);
      if constexpr (T > 1) hi1 = __riscv_vwmul_vx_i16m2(hi, x1[e + 32], vl);
    } else {
      lo0 = __riscv_vwmacc_vx_i16m2(lo0, x0[e], lo, vl);
      hi0 = __riscv_vwmacc_vx_i16m2(hi0, x0[e + 32], hi, vl);
      if constexpr (T > 1) lo1 = __riscv_vwmacc_vx_i16m2(lo1, x1[e], lo, vl);
      if constexpr (T > 1) hi1 = __riscv_vwmacc_vx_i16m2(hi1, x1[e + 32], hi, vl);
    }
    if constexpr (c + 1 < kCols) mac_columns<T, kCols, c + 1>(lo0, hi0, lo1, hi1, los, his, x0, x1, e + 1, false, vl);
  }

  // The chains of the L::kChain columns l0 .. of group g into s += sc_lo * lo-chain + sc_hi *
  // hi-chain for T X rows.
  template <int T, int kCols>
  static void chain(vint32m4_t& s0, vint32m4_t& s1, const uint8_t* q, const uint8_t* masks, const int8_t* x0,
                    const int8_t* x1, int g, int l0, vint16m2_t sc_lo, vint16m2_t sc_hi, size_t vl) {
    vint16m2_t lo0, hi0, lo1, hi1;
#pragma GCC unroll 16  // straight-line code: the vector loads need no loop counter
    for (int l = l0; l < l0 + L::kChain; l += kCols) {
      vuint8m4_t los, his;
      // Column l's low nibble is element 64g + l, its high nibble element 64g + 32 + l.
      unpack<kCols>(q + (32 * g + l) * kPanelRows, masks, 64 * g + l, los, his, vl);
      mac_columns<T, kCols>(lo0, hi0, lo1, hi1, los, his, x0, x1, 64 * g + l, l == l0, vl);
    }
    s0 = __riscv_vwmacc_vv_i32m4(__riscv_vwmacc_vv_i32m4(s0, sc_lo, lo0, vl), sc_hi, hi0, vl);
    if constexpr (T > 1) s1 = __riscv_vwmacc_vv_i32m4(__riscv_vwmacc_vv_i32m4(s1, sc_lo, lo1, vl), sc_hi, hi1, vl);
  }

  // y (+)= dx * (d * float(s) - dmin * float(m)): the first super-block stores.
  static void update(float* y, float dx, vfloat32m4_t d, vfloat32m4_t dmin, vint32m4_t s, vint32m4_t m, bool first,
                     size_t vl) {
    vfloat32m4_t t = __riscv_vfmul_vv_f32m4(d, __riscv_vfcvt_f_x_v_f32m4(s, vl), vl);
    t = __riscv_vfnmsac_vv_f32m4(t, dmin, __riscv_vfcvt_f_x_v_f32m4(m, vl), vl);
    add_block(y, __riscv_vfmul_vf_f32m4(t, dx, vl), first, vl);
  }

  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    strip_by_columns<T>(*this, panel, r, vl, j, y);
  }

  template <int T, int kCols>
  void strip_columns(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    constexpr size_t kColumn = sizeof(typename L::Block) * kPanelRows;
    const block_q8_K* x0 = xrow(j);
    const block_q8_K* x1 = xrow(j + T - 1);
    const int16_t* m0 = sub_sums + j * nsb * kSubBlocks;
    const int16_t* m1 = sub_sums + (j + T - 1) * nsb * kSubBlocks;
    for (int64_t b = 0; b < nsb; b++, m0 += kSubBlocks, m1 += kSubBlocks) {
      const std::byte* column = panel + size_t(b) * kColumn;
      const auto* bytes = reinterpret_cast<const uint8_t*>(column + 4 * kPanelRows);
      // r is a multiple of VLMAX >= 16 (e32 LMUL 4 at VLEN >= 128): whole mask bytes.
      const uint8_t* masks = bytes + K_SCALE_SIZE * kPanelRows + r / 8;
      const uint8_t* q = bytes + (K_SCALE_SIZE * kPanelRows + L::kMaskBytes) + r;
      bytes += r;
      vint32m4_t s0 = __riscv_vmv_v_x_i32m4(0, vl), s1 = s0;
      for (int g = 0; g < QK_K / 64; g++) {
        const vint16m2_t sc_lo = scale_or_min<false>(bytes, 2 * g, vl);
        const vint16m2_t sc_hi = scale_or_min<false>(bytes, 2 * g + 1, vl);
        for (int l0 = 0; l0 < 32; l0 += L::kChain)
          chain<T, kCols>(s0, s1, q, masks, x0[b].qs, x1[b].qs, g, l0, sc_lo, sc_hi, vl);
      }
      // The mins term: sum_s m_s * (the activation's sub-block sum).
      vint32m4_t n0 = __riscv_vmv_v_x_i32m4(0, vl), n1 = n0;
      for (int s = 0; s < kSubBlocks; s++) {
        const vint16m2_t m = scale_or_min<true>(bytes, s, vl);
        n0 = __riscv_vwmacc_vx_i32m4(n0, m0[s], m, vl);
        if constexpr (T > 1) n1 = __riscv_vwmacc_vx_i32m4(n1, m1[s], m, vl);
      }
      const auto* d = reinterpret_cast<const uint16_t*>(column) + r;
      const vfloat32m4_t dw = H::scales(d, vl), dmin = H::scales(d + kPanelRows, vl);
      update(y, x0[b].d, dw, dmin, s0, n0, b == 0, vl);
      if constexpr (T > 1) update(y + y_stride, x1[b].d, dw, dmin, s1, n1, b == 0, vl);
    }
  }
};

// PanelGemmFn of Q4_K / Q5_K panels against Q8_K activation rows.
template <class H, class L>
void gemm_nibble_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride,
                        const void* x, size_t x_stride, float* y, size_t y_stride, std::byte* scratch) {
  const auto* xb = static_cast<const std::byte*>(x);
  const int64_t nsb = n / QK_K;
  const NibbleStrips<H, L> s{{xb, x_stride, y_stride, nsb}, activation_sub_sums(xb, x_stride, nx, nsb, scratch)};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

}  // namespace
}  // namespace hart::cpu::riscv
