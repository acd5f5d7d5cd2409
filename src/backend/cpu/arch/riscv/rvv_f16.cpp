// F16 weights with Zvfh (this file is compiled with -march=rv64gcv_zvfh): weights widen exactly to
// f32 (vfwcvt) and meet the F32 activations as they are, like the reference; attention's scores
// over F16 K rows and values over F16 V rows; and the F16 row converters (F16 KV caches).
#include <riscv_vector.h>

#include <algorithm>

#include "backend/cpu/arch/riscv/rvv_math.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

// W (n,) f16 . x (n,) f32 -> out
void vec_dot_f16(int64_t n, float* out, const void* w, const void* x) {
  const auto* a = static_cast<const _Float16*>(w);
  const auto* b = static_cast<const float*>(x);
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e16m2(size_t(n) - i);
    const vfloat32m4_t wf = __riscv_vfwcvt_f_f_v_f32m4(__riscv_vle16_v_f16m2(a + i, vl), vl);
    acc = __riscv_vfmacc_vv_f32m4_tu(acc, wf, __riscv_vle32_v_f32m4(b + i, vl), vl);
  }
  *out = sum_lanes(acc);
}

// Attention scores (DotKernel::scores) of G q rows: each K row is widened once per strip of d and
// met by all G rows, whose sums stay in registers (G LMUL-4 groups) until one reduction per pair.
template <int G>
void score_rows(int64_t d, int64_t n, const char* const* k, const char* q, size_t q_stride, float* s) {
  const auto q_row = [&](int g) { return reinterpret_cast<const float*>(q + size_t(g) * q_stride); };
  for (int64_t j = 0; j < n; j++) {
    const auto* kj = reinterpret_cast<const _Float16*>(k[j]);
    vfloat32m4_t a0 = zero_lanes(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0, vl; i < size_t(d); i += vl) {
      vl = __riscv_vsetvl_e16m2(size_t(d) - i);
      const vfloat32m4_t kf = __riscv_vfwcvt_f_f_v_f32m4(__riscv_vle16_v_f16m2(kj + i, vl), vl);
      a0 = __riscv_vfmacc_vv_f32m4_tu(a0, kf, __riscv_vle32_v_f32m4(q_row(0) + i, vl), vl);
      if constexpr (G > 1) a1 = __riscv_vfmacc_vv_f32m4_tu(a1, kf, __riscv_vle32_v_f32m4(q_row(1) + i, vl), vl);
      if constexpr (G > 2) a2 = __riscv_vfmacc_vv_f32m4_tu(a2, kf, __riscv_vle32_v_f32m4(q_row(2) + i, vl), vl);
      if constexpr (G > 3) a3 = __riscv_vfmacc_vv_f32m4_tu(a3, kf, __riscv_vle32_v_f32m4(q_row(3) + i, vl), vl);
    }
    s[j] = sum_lanes(a0);
    if constexpr (G > 1) s[n + j] = sum_lanes(a1);
    if constexpr (G > 2) s[2 * n + j] = sum_lanes(a2);
    if constexpr (G > 3) s[3 * n + j] = sum_lanes(a3);
  }
}

void scores_f16(int64_t d, int64_t rows, const void* q, size_t q_stride, int64_t n, const char* const* k, float* s) {
  constexpr int64_t kRows = 4;  // 4 accumulators + K widened + a q strip: 26 of the 32 registers
  for (int64_t i0 = 0; i0 < rows; i0 += kRows) {
    const char* qi = static_cast<const char*>(q) + size_t(i0) * q_stride;
    float* si = s + i0 * n;
    switch (std::min(kRows, rows - i0)) {
      case 1: score_rows<1>(d, n, k, qi, q_stride, si); break;
      case 2: score_rows<2>(d, n, k, qi, q_stride, si); break;
      case 3: score_rows<3>(d, n, k, qi, q_stride, si); break;
      default: score_rows<4>(d, n, k, qi, q_stride, si); break;
    }
  }
}

// Attention values (Kernels::values) of G y rows: each strip of a V row is widened once and met by
// all G rows, whose strips stay in registers (G LMUL-4 groups) while the m V rows stream past.
// Per element the vfmacc's of axpy_rows, in its order.
template <int G>
void value_rows(int64_t n, int64_t m, const float* a, const char* const* v, float* y) {
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e16m2(size_t(n) - i);
    const auto y_row = [&](int g) { return y + size_t(g) * size_t(n) + i; };
    vfloat32m4_t y0 = __riscv_vle32_v_f32m4(y_row(0), vl), y1 = y0, y2 = y0, y3 = y0;
    if constexpr (G > 1) y1 = __riscv_vle32_v_f32m4(y_row(1), vl);
    if constexpr (G > 2) y2 = __riscv_vle32_v_f32m4(y_row(2), vl);
    if constexpr (G > 3) y3 = __riscv_vle32_v_f32m4(y_row(3), vl);
    for (int64_t j = 0; j < m; j++) {
      const auto* vj = reinterpret_cast<const _Float16*>(v[j]) + i;
      const vfloat32m4_t vf = __riscv_vfwcvt_f_f_v_f32m4(__riscv_vle16_v_f16m2(vj, vl), vl);
      y0 = __riscv_vfmacc_vf_f32m4(y0, a[j], vf, vl);
      if constexpr (G > 1) y1 = __riscv_vfmacc_vf_f32m4(y1, a[m + j], vf, vl);
      if constexpr (G > 2) y2 = __riscv_vfmacc_vf_f32m4(y2, a[2 * m + j], vf, vl);
      if constexpr (G > 3) y3 = __riscv_vfmacc_vf_f32m4(y3, a[3 * m + j], vf, vl);
    }
    __riscv_vse32_v_f32m4(y_row(0), y0, vl);
    if constexpr (G > 1) __riscv_vse32_v_f32m4(y_row(1), y1, vl);
    if constexpr (G > 2) __riscv_vse32_v_f32m4(y_row(2), y2, vl);
    if constexpr (G > 3) __riscv_vse32_v_f32m4(y_row(3), y3, vl);
  }
}

void values_f16(int64_t n, int64_t rows, int64_t m, const float* a, const char* const* v, float* y) {
  constexpr int64_t kRows = 4;  // 4 accumulators + a widened V strip: 20 of the 32 registers
  for (int64_t i0 = 0; i0 < rows; i0 += kRows) {
    const float* ai = a + i0 * m;
    float* yi = y + i0 * n;
    switch (std::min(kRows, rows - i0)) {
      case 1: value_rows<1>(n, m, ai, v, yi); break;
      case 2: value_rows<2>(n, m, ai, v, yi); break;
      case 3: value_rows<3>(n, m, ai, v, yi); break;
      default: value_rows<4>(n, m, ai, v, yi); break;
    }
  }
}

// f32 -> f16, round to nearest even (the dynamic rounding mode's default), overflow to inf.
void f32_to_f16_row(const float* x, void* y, int64_t n) {
  auto* h = static_cast<_Float16*>(y);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m8(size_t(n) - i);
    __riscv_vse16_v_f16m4(h + i, __riscv_vfncvt_f_f_w_f16m4(__riscv_vle32_v_f32m8(x + i, vl), vl), vl);
  }
}

// f16 -> f32, exact (F16 KV cache rows in attention, F16 GET_ROWS).
void f16_to_f32_row(const void* x, float* y, int64_t n) {
  const auto* h = static_cast<const _Float16*>(x);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e16m4(size_t(n) - i);
    __riscv_vse32_v_f32m8(y + i, __riscv_vfwcvt_f_f_v_f32m8(__riscv_vle16_v_f16m4(h + i, vl), vl), vl);
  }
}

}  // namespace

void fill_rvv_f16(Kernels& k) {
  k.dot[uint32_t(Type::F16)] = {Type::F32, vec_dot_f16, nullptr, scores_f16};
  k.from_f32[uint32_t(Type::F16)] = f32_to_f16_row;
  k.to_f32[uint32_t(Type::F16)] = f16_to_f32_row;
  k.values[uint32_t(Type::F16)] = values_f16;
}

}  // namespace hart::cpu::riscv
