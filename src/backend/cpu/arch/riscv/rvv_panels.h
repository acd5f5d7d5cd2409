// MUL_MAT on F16 / BF16 weights repacked into 32-row panels (layout in backend/cpu/repack.h:
// element k of panel row r at [k * 32 + r]) with FP32 accumulation. Column k of a panel is 32
// adjacent weights, one per row: widened to f32 and multiplied by the scalar x[k] it updates the
// 32 row sums lane by lane, so no horizontal reduction is needed, and each widened column serves
// up to 4 X rows (the decode GEMV is one X row; from 3, rvv_panels_wide.h's prompt GEMM widens
// each column once per call instead, and gemm_panels serves 1 and 2). Vector-length agnostic: the 32
// lanes are strip-mined with vsetvl at e32 LMUL 4 (one strip at VLEN >= 256, two at VLEN 128),
// which leaves room for 4 accumulators, 2 widened columns and a 16-bit load (26 registers); at
// VLEN 512, where a panel's 32 lanes are half of LMUL 4's, one load and widening serve 4 columns
// (FloatLanes<4>).
//
// Included by one translation unit per weight type (rvv_panels_bf16.cpp with V,
// rvv_panels_f16.cpp with Zvfh), which passes a weight traits class W:
//   auto W::widen<kRegs>(const uint16_t* columns, size_t n)  n weights (an e16 LMUL kRegs load,
//                                                             1, 2 or 4) -> f32 at twice the LMUL, exact
//   static float W::act(const std::byte* x_row, int64_t k)           element k of an X row
//   static constexpr size_t W::kActBytes                             bytes of one X row element
#pragma once

#include <riscv_vector.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace hart::cpu::riscv {
namespace {  // each including translation unit compiles its own copy for its own -march

constexpr int kPanelRows = 32;

// Columns summed in registers before the sums are added to y: one long chain of float additions
// per row would lose ~sqrt(K / kBlock) times more precision than this blocked summation, which
// is about as accurate as the row-major dot's lane-parallel sums (one y update per 32 columns).
constexpr int64_t kBlock = 32;

// The lanes of a float strip (vl <= 32 rows of a panel): kCols = 1 widens one column per e16
// LMUL 2 load into f32 LMUL 4; kCols = 4 where an e16 register holds exactly one panel column
// (vl == kPanelRows == vlenb / 2, VLEN 512), where LMUL 4 would leave half the lanes idle: one
// e16 LMUL 4 load and one widening to f32 LMUL 8 serve 4 columns, each an f32 LMUL 2 pair of
// registers (SmolLM2-135M F16 decode at VLEN 512: F16 panels 35.9M -> 18.8M instructions per
// token, about 8.5 -> 4.5 per column of a panel).
template <int kCols>
struct FloatLanes {
  static_assert(kCols == 1 || kCols == 4);
  static constexpr int kColumnRegs = kCols == 1 ? 2 : 1;  // e16 registers of one column's weights
  using Acc = std::conditional_t<kCols == 1, vfloat32m4_t, vfloat32m2_t>;
  static Acc zero(size_t vl) {
    if constexpr (kCols == 1)
      return __riscv_vfmv_v_f_f32m4(0.0f, vl);
    else
      return __riscv_vfmv_v_f_f32m2(0.0f, vl);
  }
  static Acc load(const float* y, size_t vl) {
    if constexpr (kCols == 1)
      return __riscv_vle32_v_f32m4(y, vl);
    else
      return __riscv_vle32_v_f32m2(y, vl);
  }
  // Column c of widened columns w (W::widen): w itself when it is one column.
  template <int c, class Wide>
  static Acc column(Wide w) {
    if constexpr (std::is_same_v<Wide, Acc>)
      return w;
    else
      return __riscv_vget_v_f32m8_f32m2(w, c);
  }
};

// y[0, vl) (+)= a: the first block stores, later ones add.
template <class Acc>
inline void add_block(float* y, Acc a, bool first, size_t vl) {
  if (!first) a = __riscv_vfadd(a, FloatLanes<std::is_same_v<Acc, vfloat32m4_t> ? 1 : 4>::load(y, vl), vl);
  __riscv_vse32(y, a, vl);
}

// Columns c .. kW - 1 of the kW widened columns w (the first is column k) into the accumulators
// of T X rows.
template <class W, int T, int kCols, int kW, int c = 0, class Acc, class Wide>
inline void mac_widened(Acc& a0, Acc& a1, Acc& a2, Acc& a3, Wide w, const std::byte* x, size_t x_stride, int64_t k,
                        size_t vl) {
  const Acc wc = FloatLanes<kCols>::template column<c>(w);
  a0 = __riscv_vfmacc(a0, W::act(x, k + c), wc, vl);
  if constexpr (T > 1) a1 = __riscv_vfmacc(a1, W::act(x + x_stride, k + c), wc, vl);
  if constexpr (T > 2) a2 = __riscv_vfmacc(a2, W::act(x + 2 * x_stride, k + c), wc, vl);
  if constexpr (T > 3) a3 = __riscv_vfmacc(a3, W::act(x + 3 * x_stride, k + c), wc, vl);
  if constexpr (c + 1 < kW) mac_widened<W, T, kCols, kW, c + 1>(a0, a1, a2, a3, w, x, x_stride, k, vl);
}

// Columns k .. k + U - 1 (the first at `column`) into the accumulators of T X rows, kW per
// widening (kCols, or one for the columns past the last whole group). Every column is widened
// before any is used, so the widenings (SEW 16) and the multiply-adds (SEW 32) switch vtype once
// per U columns rather than per widening.
template <class W, int T, int kCols, int U, class Acc>
inline void mac_columns(Acc& a0, Acc& a1, Acc& a2, Acc& a3, const uint16_t* column, const std::byte* x,
                        size_t x_stride, int64_t k, size_t vl) {
  constexpr int kW = U >= kCols ? kCols : 1;
  const auto w = W::template widen<FloatLanes<kCols>::kColumnRegs * kW>(column, kW * vl);
  if constexpr (U > kW) mac_columns<W, T, kCols, U - kW>(a0, a1, a2, a3, column + kW * kPanelRows, x, x_stride, k + kW, vl);
  mac_widened<W, T, kCols, kW>(a0, a1, a2, a3, w, x, x_stride, k, vl);
}

// Lanes [r, r + vl) of one panel for T X rows:
// y[j * y_stride + i] = sum_k W[r + i][k] * x_j[k] for i < vl, j < T.
template <class W, int T, int kCols>
void panel_strip(int64_t n, const uint16_t* column, size_t vl, const std::byte* x, size_t x_stride, float* y,
                 size_t y_stride) {
  static_assert(T >= 1 && T <= 4);
  using Acc = typename FloatLanes<kCols>::Acc;
  // Columns per step: the T accumulators, the widened columns of U (16 registers for up to 2 X
  // rows, 8 for more) and one 16-bit load fit the 32 registers.
  constexpr int U = (T <= 2 ? 16 : 8) / (kCols == 1 ? 4 : 8) * kCols;
  static_assert(kBlock % U == 0);
  for (int64_t k0 = 0; k0 == 0 || k0 < n; k0 += kBlock) {  // once for n == 0: y = 0
    const int64_t k1 = k0 + kBlock < n ? k0 + kBlock : n;
    const Acc zero = FloatLanes<kCols>::zero(vl);
    Acc a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    int64_t k = k0;
    for (; k + U <= k1; k += U, column += U * kPanelRows)
      mac_columns<W, T, kCols, U>(a0, a1, a2, a3, column, x, x_stride, k, vl);
    for (; k < k1; k++, column += kPanelRows) mac_columns<W, T, kCols, 1>(a0, a1, a2, a3, column, x, x_stride, k, vl);
    add_block(y, a0, k0 == 0, vl);
    if constexpr (T > 1) add_block(y + y_stride, a1, k0 == 0, vl);
    if constexpr (T > 2) add_block(y + 2 * y_stride, a2, k0 == 0, vl);
    if constexpr (T > 3) add_block(y + 3 * y_stride, a3, k0 == 0, vl);
  }
}

// X rows [j, j + T) with T <= S::kMaxT through S::strip, largest first.
template <class S, int T>
inline void strip_tail(const S& s, int64_t left, const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) {
  if constexpr (T >= 1) {
    if (left == T)
      s.template strip<T>(panel, r, vl, j, y);
    else
      strip_tail<S, T - 1>(s, left, panel, r, vl, j, y);
  }
}

// X rows up to which S's strips may cover a whole panel at e32 LMUL 8 (S::kWideT; 0 without): at
// VLEN 128 one instruction then serves the 32 rows where two 16-row strips take one each, for as
// many X rows as leave registers for their LMUL 8 sums (at VLEN >= 256 e32 LMUL 4 holds a panel).
template <class S>
constexpr int wide_rows() {
  if constexpr (requires { S::kWideT; })
    return S::kWideT;
  else
    return 0;
}

// The loops every panel GEMM shares: over panels, over groups of S::kMaxT X rows and strips of
// the 32 rows (vsetvl at e32 LMUL 4: one strip at VLEN >= 256, two at 128), then the X rows left
// (all of them in decode), whose strips are e32 LMUL 8 ones where S takes that many rows wide
// (wide_rows: the whole panel at VLEN 128). S::strip<T>(panel, r, vl, j, y) computes rows
// [r, r + vl) of the panel for X rows j .. j + T - 1 into y (lane i of X row j + t at
// y[t * y_stride + i]).
template <class S>
void run_panels(const S& s, int64_t n_panels, const void* panels, size_t panel_stride, int64_t nx, float* y,
                size_t y_stride) {
  const int64_t left = nx % S::kMaxT, full = nx - left;
  for (int64_t p = 0; p < n_panels; p++) {
    const std::byte* panel = static_cast<const std::byte*>(panels) + size_t(p) * panel_stride;
    float* yp = y + size_t(p) * kPanelRows;
    for (size_t r = 0, vl; full > 0 && r < kPanelRows; r += vl) {
      vl = __riscv_vsetvl_e32m4(kPanelRows - r);
      for (int64_t j = 0; j < full; j += S::kMaxT) s.template strip<S::kMaxT>(panel, r, vl, j, yp + r + size_t(j) * y_stride);
    }
    for (size_t r = 0, vl; left > 0 && r < kPanelRows; r += vl) {
      vl = left <= wide_rows<S>() ? __riscv_vsetvl_e32m8(kPanelRows - r) : __riscv_vsetvl_e32m4(kPanelRows - r);
      strip_tail<S, S::kMaxT - 1>(s, left, panel, r, vl, full, yp + r + size_t(full) * y_stride);
    }
  }
}

// The 2-byte float types' strips (panel_strip) for run_panels.
template <class W>
struct FloatStrips {
  static constexpr int kMaxT = 4;
  int64_t n;
  const std::byte* x;
  size_t x_stride, y_stride;
  template <int T>
  void strip(const std::byte* panel, size_t r, size_t vl, int64_t j, float* y) const {
    const auto* column = reinterpret_cast<const uint16_t*>(panel) + r;
    const std::byte* xj = x + size_t(j) * x_stride;
    if (vl == kPanelRows && __riscv_vsetvlmax_e16m1() == kPanelRows)
      panel_strip<W, T, 4>(n, column, vl, xj, x_stride, y, y_stride);
    else
      panel_strip<W, T, 1>(n, column, vl, xj, x_stride, y, y_stride);
  }
};

// PanelGemmFn: W panels (n_panels x 32 rows, n columns) @ X (nx rows) -> y
template <class W>
void gemm_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride, const void* x,
                 size_t x_stride, float* y, size_t y_stride, std::byte*) {
  const FloatStrips<W> s{n, static_cast<const std::byte*>(x), x_stride, y_stride};
  run_panels(s, n_panels, panels, panel_stride, nx, y, y_stride);
}

}  // namespace
}  // namespace hart::cpu::riscv
