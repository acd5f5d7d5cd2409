// F16 weights with Zvfh (this file is compiled with -march=rv64gcv_zvfh): weights widen exactly to
// f32 (vfwcvt) and meet the F32 activations as they are, like the reference; and the F16 row
// converters (F16 KV caches).
#include <riscv_vector.h>

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
  k.dot[uint32_t(Type::F16)] = {Type::F32, vec_dot_f16};
  k.from_f32[uint32_t(Type::F16)] = f32_to_f16_row;
  k.to_f32[uint32_t(Type::F16)] = f16_to_f32_row;
}

}  // namespace hart::cpu::riscv
