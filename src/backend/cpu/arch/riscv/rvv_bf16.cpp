// BF16 weights with plain RVV integer ops (no Zvfbf*: QEMU 7.2 and many cores lack it): a bf16 is
// the top half of an f32, so widening is vzext + shift, bit-exact.
#include <riscv_vector.h>

#include "backend/cpu/arch/riscv/rvv_math.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

vfloat32m4_t widen_bf16(const uint16_t* p, size_t vl) {
  const vuint32m4_t u = __riscv_vzext_vf2_u32m4(__riscv_vle16_v_u16m2(p, vl), vl);
  return __riscv_vreinterpret_v_u32m4_f32m4(__riscv_vsll_vx_u32m4(u, 16, vl));
}

// W (n,) bf16 . x (n,) bf16 -> out
void vec_dot_bf16(int64_t n, float* out, const void* w, const void* x) {
  const auto* a = static_cast<const uint16_t*>(w);
  const auto* b = static_cast<const uint16_t*>(x);
  vfloat32m4_t acc = zero_lanes();
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    acc = __riscv_vfmacc_vv_f32m4_tu(acc, widen_bf16(a + i, vl), widen_bf16(b + i, vl), vl);
  }
  *out = sum_lanes(acc);
}

// f32 -> bf16 as ggml rounds it: to nearest even on the raw bits; NaN kept and forced quiet.
void f32_to_bf16_row(const float* x, void* y, int64_t n) {
  auto* h = static_cast<uint16_t*>(y);
  for (size_t i = 0, vl; i < size_t(n); i += vl) {
    vl = __riscv_vsetvl_e32m4(size_t(n) - i);
    const vfloat32m4_t f = __riscv_vle32_v_f32m4(x + i, vl);
    const vuint32m4_t u = __riscv_vreinterpret_v_f32m4_u32m4(f);
    const vuint32m4_t odd = __riscv_vand_vx_u32m4(__riscv_vsrl_vx_u32m4(u, 16, vl), 1, vl);
    vuint32m4_t r = __riscv_vsrl_vx_u32m4(__riscv_vadd_vv_u32m4(__riscv_vadd_vx_u32m4(u, 0x7fff, vl), odd, vl), 16, vl);
    const vbool8_t nan = __riscv_vmfne_vv_f32m4_b8(f, f, vl);
    r = __riscv_vmerge_vvm_u32m4(r, __riscv_vor_vx_u32m4(__riscv_vsrl_vx_u32m4(u, 16, vl), 64, vl), nan, vl);
    __riscv_vse16_v_u16m2(h + i, __riscv_vncvt_x_x_w_u16m2(r, vl), vl);
  }
}

}  // namespace

void fill_rvv_bf16(Kernels& k) {
  k.dot[uint32_t(Type::BF16)] = {Type::BF16, vec_dot_bf16};
  k.from_f32[uint32_t(Type::BF16)] = f32_to_bf16_row;
}

}  // namespace hart::cpu::riscv
