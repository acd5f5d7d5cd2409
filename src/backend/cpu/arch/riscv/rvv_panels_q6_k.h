// MUL_MAT on Q6_K weights repacked into 32-row byte panels (repack.h, Q6_K "_bytes") against Q8_K
// activations; included by rvv_panels_q.h, which registers it with the other quantized panels.
// Per super-block column: fp16 d[32], the 16 int8 group scales of the 32 rows, then 12 level
// bytes per 16-weight group g, byte j of the rows one e8 vector (lane = row). Byte 12g + 4t + c
// (t < 3, c < 4) holds weight 16g + 4t + c as a signed 6-bit level (q - 32) in its top 6 bits, so
// one vsra gives it, and 2 bits of weight 16g + 12 + c in its low 2 bits (bits 2t, 2t + 1), which
// two vand, one vsll, two vmacc and a vsra put together. Per row and super-block:
//   y += dx * d * sum_g scale_g * sum_{i in g} (q_i - 32) x_i
//
// Integer ranges: levels -32..31 and |x| <= 127 (the Q8_K quantizers map the largest magnitude to
// -127), so a chain of 8 products fits int16 (8 * 32 * 127 = 32512): each group is two chains,
// each added times scale_g into int32 (vwmacc.vv); a super-block's sums are exact in int32
// (256 * 32 * 127 * 128 < 2^31) and are converted and scaled once. At VLEN 256 (a vector
// register holds exactly one panel column) the level bytes are unpacked 4 columns per instruction
// (e8 LMUL 4). H widens fp16 as in rvv_panels_q.h (H::scales).
#pragma once

#include <riscv_vector.h>

#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_panels_q4_k.h"  // strip_by_columns, Q8KRows
#include "backend/cpu/repack.h"
#include "quant/blocks.h"

namespace hart::cpu::riscv {
namespace {

constexpr int kQ6Groups = QK_K / 16;
constexpr size_t kQ6Role = 4 * kPanelRows;  // bytes from a group's weights 4t + c to 4(t + 1) + c

template <class H>
struct Q6KStrips : Q8KRows {
  // kCols level-byte columns from q: the first in the low register of the m4 group (kCols 1) or
  // 4 columns filling it (kCols 4: one vector register holds exactly one column).
  template <int kCols>
  static vint8m4_t load(const uint8_t* q, size_t vl) {
    const auto* p = reinterpret_cast<const int8_t*>(q);
    if constexpr (kCols == 1)
      return __riscv_vlmul_ext_v_i8m1_i8m4(__riscv_vle8_v_i8m1(p, vl));
    else
      return __riscv_vle8_v_i8m4(p, kCols * vl);
  }

  // Chains c0 (c1) += column i of v times X row 0's (1's) element x0[i] (x1[i]), for the kCols - i
  // columns left; `start` sets the chains from the first product instead.
  template <int T, int kCols, int i = 0>
  static void mac(vint16m2_t& c0, vint16m2_t& c1, vint8m4_t v, const int8_t* x0, const int8_t* x1, bool start,
                  size_t vl) {
    const vint8m1_t w = __riscv_vget_v_i8m4_i8m1(v, i);
    if (start && i == 0) {
      c0 = __riscv_vwmul_vx_i16m2(w, x0[i], vl);
      if constexpr (T > 1) c1 = __riscv_vwmul_vx_i16m2(w, x1[i], vl);
    } else {
      c0 = __riscv_vwmacc_vx_i16m2(c0, x0[i], w, vl);
      if constexpr (T > 1) c1 = __riscv_vwmacc_vx_i16m2(c1, x1[i], w, vl);
    }
    if constexpr (i + 1 < kCols) mac<T, kCols, i + 1>(c0, c1, v, x0, x1, false, vl);
  }

  // Weights c .. c + kCols - 1 of each quarter of a group (q: its byte column c, x0 / x1: the X
  // rows' element 16g + c) into the chains lo (quarters 0, 1) and hi (quarters 2, 3).
  template <int T, int kCols>
  static void quarters(vint16m2_t& lo0, vint16m2_t& hi0, vint16m2_t& lo1, vint16m2_t& hi1, const uint8_t* q,
                       const int8_t* x0, const int8_t* x1, bool start, size_t vl) {
    const size_t n = kCols * vl;
    // Quarter 3's level, built from the low 2 bits of the three bytes as (level << 2) in p.
    const vint8m4_t b0 = load<kCols>(q, vl);
    vint8m4_t p = __riscv_vand_vx_i8m4(b0, 3, n);
    // p is formed here, so that b0 dies before the products: left to itself the scheduler sinks
    // it to its use and keeps b0 alive beside the chains and sums, which spills with 2 X rows.
    asm("" : "+vr"(p));
    mac<T, kCols>(lo0, lo1, __riscv_vsra_vx_i8m4(b0, 2, n), x0, x1, start, vl);
    const vint8m4_t b1 = load<kCols>(q + kQ6Role, vl);
    p = __riscv_vmacc_vx_i8m4(p, 4, __riscv_vand_vx_i8m4(b1, 3, n), n);
    asm("" : "+vr"(p));
    mac<T, kCols>(lo0, lo1, __riscv_vsra_vx_i8m4(b1, 2, n), x0 + 4, x1 + 4, false, vl);
    const vint8m4_t b2 = load<kCols>(q + 2 * kQ6Role, vl);
    mac<T, kCols>(hi0, hi1, __riscv_vsra_vx_i8m4(b2, 2, n), x0 + 8, x1 + 8, start, vl);
    p = __riscv_vmacc_vx_i8m4(__riscv_vsll_vx_i8m4(b2, 6, n), 4, p, n);
    mac<T, kCols>(hi0, hi1, __riscv_vsra_vx_i8m4(p, 2, n), x0 + 12, x1 + 12, false, vl);
  }

  // y (+)= dx * d * float(s): the first super-block stores.
  static void update(float* y, float dx, vfloat32m4_t d, vint32m4_t s, bool first, size_t vl) {
    add_block(y, __riscv_vfmul_vf_f32m4(__riscv_vfmul_vv_f32m4(d, __riscv_vfcvt_f_x_v_f32m4(s, vl), vl), dx, vl),
              first, vl);
  }

  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    strip_by_columns<T>(*this, panel, r, vl, j, y);
  }

  template <int T, int kCols>
  void strip_columns(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    constexpr size_t kColumn = sizeof(block_q6_K) * kPanelRows;
    const block_q8_K* x0 = xrow(j);
    const block_q8_K* x1 = xrow(j + T - 1);
    for (int64_t b = 0; b < nsb; b++) {
      const std::byte* column = panel + size_t(b) * kColumn;
      const auto* scales = reinterpret_cast<const int8_t*>(column + 2 * kPanelRows) + r;
      const auto* q = reinterpret_cast<const uint8_t*>(scales + kQ6Groups * kPanelRows);
      vint32m4_t s0 = __riscv_vmv_v_x_i32m4(0, vl), s1 = s0;
#pragma unroll(T == 1 ? 4 : 1)  // more unrolling spills: the scheduler hoists the next groups' loads
      for (int g = 0; g < kQ6Groups; g++) {
        vint16m2_t lo0, hi0, lo1, hi1;
#pragma GCC unroll 4
        for (int c = 0; c < 4; c += kCols)
          quarters<T, kCols>(lo0, hi0, lo1, hi1, q + size_t(12 * g + c) * kPanelRows, x0[b].qs + 16 * g + c,
                             x1[b].qs + 16 * g + c, c == 0, vl);
        const vint16m2_t sc = __riscv_vsext_vf2_i16m2(__riscv_vle8_v_i8m1(scales + g * kPanelRows, vl), vl);
        s0 = __riscv_vwmacc_vv_i32m4(__riscv_vwmacc_vv_i32m4(s0, sc, lo0, vl), sc, hi0, vl);
        if constexpr (T > 1) s1 = __riscv_vwmacc_vv_i32m4(__riscv_vwmacc_vv_i32m4(s1, sc, lo1, vl), sc, hi1, vl);
      }
      const vfloat32m4_t d = H::scales(reinterpret_cast<const uint16_t*>(column) + r, vl);
      update(y, x0[b].d, d, s0, b == 0, vl);
      if constexpr (T > 1) update(y + y_stride, x1[b].d, d, s1, b == 0, vl);
    }
  }
};

// PanelGemmFn of Q6_K panels against Q8_K activation rows.
template <class H>
void gemm_q6_K_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride, const void* x,
                      size_t x_stride, float* y, size_t y_stride, std::byte*) {
  const Q6KStrips<H> s{{static_cast<const std::byte*>(x), x_stride, y_stride, n / QK_K}};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

}  // namespace
}  // namespace hart::cpu::riscv
