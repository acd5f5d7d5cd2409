// The prompt GEMM (several X rows) on F16 / BF16 panels (rvv_panels.h's layout): the panels of
// a call are widened to f32 once per block of kBlock columns into the caller's scratch, as many
// adjacent panels as one e32 LMUL 8 register holds (2 at VLEN 256, 4 at 512, 1 at 128), so
// that column k of the group is one unit-stride load. Each loaded column then serves 3 X rows
// (3 sums of LMUL 8 and the column: all 32 vector registers): per column one load, one address
// add and per X row one scalar activation load and one vfmacc.vf over the whole group. Where the
// strips of panel_strip widened every column again for every 4 X rows, at e32 LMUL 4, this takes
// about a third of the instructions at VLEN 256 (SmolLM2-135M F16 prefill).
//
// Widening costs about 5 instructions per 32 weights once per call, which 3 or more X rows
// repay; fewer (decode) keep the strips. The sums are blocked as panel_strip's are (one y update
// per kBlock columns), the columns of a block added in order.
#pragma once

#include <algorithm>

#include "backend/cpu/arch/riscv/rvv_panels.h"

namespace hart::cpu::riscv {
namespace {

constexpr int64_t kWideMinRows = 3;  // X rows from which gemm_panels widens once per call
constexpr size_t kWideMaxPanels = 8;  // panels per group: bounds the scratch at VLEN > 1024

// Panels widened together: whole panels in one e32 LMUL 8 register (VLEN >= 128: at least one).
inline size_t wide_group_panels() {
  return std::min(__riscv_vsetvlmax_e32m8() / kPanelRows, kWideMaxPanels);
}

// PanelKernel::tile_rows: MUL_MAT tiles of whole groups (a tile's last group may be narrower and
// costs as many instructions as a whole one).
inline int wide_tile_rows() { return int(wide_group_panels()) * kPanelRows; }

// PanelScratchFn: one group's widened block of columns.
size_t wide_scratch_bytes(int64_t, int64_t nx) {
  return nx >= kWideMinRows ? size_t(kBlock) * wide_group_panels() * kPanelRows * sizeof(float) : 0;
}

// Columns [k0, k0 + kb) of panels [0, np) as f32 at wide[c * np * 32 + p * 32 + i] (row i of
// panel p, column k0 + c). One panel's columns are contiguous both ways: widened in long runs.
template <class W>
void widen_block(const std::byte* panels, size_t panel_stride, size_t np, int64_t k0, int64_t kb, float* wide) {
  const size_t g = np * kPanelRows;
  if (np == 1) {
    const auto* src = reinterpret_cast<const uint16_t*>(panels) + size_t(k0) * kPanelRows;
    const size_t total = size_t(kb) * kPanelRows;
    for (size_t i = 0, vl; i < total; i += vl) {
      vl = __riscv_vsetvl_e16m4(total - i);
      __riscv_vse32(wide + i, W::template widen<4>(src + i, vl), vl);
    }
    return;
  }
  const size_t vl = __riscv_vsetvl_e16m4(kPanelRows);  // one column of a panel (e16 LMUL 4 holds >= 32)
  for (size_t p = 0; p < np; p++) {
    const auto* src = reinterpret_cast<const uint16_t*>(panels + p * panel_stride) + size_t(k0) * kPanelRows;
    float* dst = wide + p * kPanelRows;
    for (int64_t c = 0; c < kb; c++, src += kPanelRows, dst += g) __riscv_vse32(dst, W::template widen<4>(src, vl), vl);
  }
}

// Column k of the group (widened, g lanes) into the sums of T X rows.
template <class W, int T>
inline void wide_mac(vfloat32m8_t& a0, vfloat32m8_t& a1, vfloat32m8_t& a2, vfloat32m8_t w, const std::byte* x,
                     size_t x_stride, int64_t k, size_t g) {
  a0 = __riscv_vfmacc(a0, W::act(x, k), w, g);
  if constexpr (T > 1) a1 = __riscv_vfmacc(a1, W::act(x + x_stride, k), w, g);
  if constexpr (T > 2) a2 = __riscv_vfmacc(a2, W::act(x + 2 * x_stride, k), w, g);
  // The sums are complete before the next column is loaded: left to itself clang-19 hoists the
  // next columns' loads above these multiply-adds, which needs a fifth LMUL 8 group, and spills
  // (about 110 vector spills and reloads per block). This costs one vsetvli per column.
  if constexpr (T == 1)
    asm("" : "+vr"(a0));
  else if constexpr (T == 2)
    asm("" : "+vr"(a0), "+vr"(a1));
  else
    asm("" : "+vr"(a0), "+vr"(a1), "+vr"(a2));
}

// y[t * y_stride + i] (+)= sum_{c < kb} wide[c * g + i] * x_t[c] for i < g, t < T (x: the X
// rows at the block's first column): the first block stores, later ones add. Not inlined: in the
// caller's loops clang-19 hoists the 32 activation offsets out of the loop over X rows and spills
// them (a stack load per column).
template <class W, int T>
__attribute__((noinline)) void wide_strip(const float* wide, size_t g, int64_t kb, const std::byte* x,
                                          size_t x_stride, float* y, size_t y_stride, bool first) {
  static_assert(T >= 1 && T <= 3);
  const vfloat32m8_t w0 = __riscv_vle32_v_f32m8(wide, g);
  vfloat32m8_t a0 = __riscv_vfmul(w0, W::act(x, 0), g), a1 = a0, a2 = a0;
  if constexpr (T > 1) a1 = __riscv_vfmul(w0, W::act(x + x_stride, 0), g);
  if constexpr (T > 2) a2 = __riscv_vfmul(w0, W::act(x + 2 * x_stride, 0), g);
  const float* w = wide + g;
  if (kb == kBlock) {  // unrolled: the activations at immediate offsets
#pragma clang loop unroll(full)
    for (int64_t c = 1; c < kBlock; c++, w += g)
      wide_mac<W, T>(a0, a1, a2, __riscv_vle32_v_f32m8(w, g), x, x_stride, c, g);
  } else {
#pragma clang loop unroll(disable)
    for (int64_t c = 1; c < kb; c++, w += g) wide_mac<W, T>(a0, a1, a2, __riscv_vle32_v_f32m8(w, g), x, x_stride, c, g);
  }
  const auto put = [&](float* yt, vfloat32m8_t a) {
    if (!first) a = __riscv_vfadd(a, __riscv_vle32_v_f32m8(yt, g), g);
    __riscv_vse32(yt, a, g);
  };
  put(y, a0);
  if constexpr (T > 1) put(y + y_stride, a1);
  if constexpr (T > 2) put(y + 2 * y_stride, a2);
}

// PanelGemmFn for nx >= kWideMinRows; scratch: wide_scratch_bytes(n, nx).
template <class W>
void gemm_wide(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride, std::byte* scratch) {
  auto* wide = reinterpret_cast<float*>(scratch);
  const auto* xb = static_cast<const std::byte*>(x);
  const size_t group = wide_group_panels();
  for (int64_t p0 = 0; p0 < n_panels; p0 += int64_t(group)) {
    const size_t np = std::min(group, size_t(n_panels - p0)), g = np * kPanelRows;
    const std::byte* gp = static_cast<const std::byte*>(panels) + size_t(p0) * panel_stride;
    float* yg = y + size_t(p0) * kPanelRows;
    if (n == 0) {  // empty sums
      for (int64_t j = 0; j < nx; j++) __riscv_vse32(yg + size_t(j) * y_stride, __riscv_vfmv_v_f_f32m8(0.0f, g), g);
      continue;
    }
    for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
      const int64_t kb = std::min(kBlock, n - k0);
      widen_block<W>(gp, panel_stride, np, k0, kb, wide);
      const std::byte* xk = xb + size_t(k0) * W::kActBytes;
      const bool first = k0 == 0;
      int64_t j = 0;
      for (; j + 3 <= nx; j += 3)
        wide_strip<W, 3>(wide, g, kb, xk + size_t(j) * x_stride, x_stride, yg + size_t(j) * y_stride, y_stride, first);
      if (nx - j == 2)
        wide_strip<W, 2>(wide, g, kb, xk + size_t(j) * x_stride, x_stride, yg + size_t(j) * y_stride, y_stride, first);
      else if (nx - j == 1)
        wide_strip<W, 1>(wide, g, kb, xk + size_t(j) * x_stride, x_stride, yg + size_t(j) * y_stride, y_stride, first);
    }
  }
}

// PanelGemmFn of the F16 / BF16 panels (scratch: wide_scratch_bytes): the strips for the decode
// GEMV and 2 X rows, widened groups from kWideMinRows.
template <class W>
void gemm_float_panels(int64_t n, int64_t n_panels, int64_t nx, const void* panels, size_t panel_stride, const void* x,
                       size_t x_stride, float* y, size_t y_stride, std::byte* scratch) {
  if (nx >= kWideMinRows)
    gemm_wide<W>(n, n_panels, nx, panels, panel_stride, x, x_stride, y, y_stride, scratch);
  else
    gemm_panels<W>(n, n_panels, nx, panels, panel_stride, x, x_stride, y, y_stride, scratch);
}

}  // namespace
}  // namespace hart::cpu::riscv
