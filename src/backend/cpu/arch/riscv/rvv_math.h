// Vector math shared by the RVV kernels (include only from translation units compiled with V).
// Every helper works on any VLEN: callers strip-mine with vsetvl and pass vl through.
#pragma once

#include <riscv_vector.h>

#include <cstddef>
#include <iterator>

namespace hart::cpu::riscv {

// e^x, within ~2 ulp of std::exp over the float range. x = n*ln2 + r with |r| <= ln2/2, e^r by a
// degree-7 Taylor polynomial (truncation < 1e-8 relative), 2^n applied in two halves so that
// results near overflow and in the subnormal range come out right. Inputs are clamped first:
// -inf gives 0 (masked softmax entries), +inf gives inf.
inline vfloat32m2_t exp_f32m2(vfloat32m2_t x, size_t vl) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // few mantissa bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = 1.42860682030941723e-6f;
  x = __riscv_vfmin_vf_f32m2(__riscv_vfmax_vf_f32m2(x, -104.0f, vl), 88.73f, vl);
  const vint32m2_t n = __riscv_vfcvt_x_f_v_i32m2(__riscv_vfmul_vf_f32m2(x, kLog2e, vl), vl);
  const vfloat32m2_t nf = __riscv_vfcvt_f_x_v_f32m2(n, vl);
  vfloat32m2_t r = __riscv_vfnmsac_vf_f32m2(x, kLn2Hi, nf, vl);  // x - n*ln2_hi
  r = __riscv_vfnmsac_vf_f32m2(r, kLn2Lo, nf, vl);
  constexpr float kCoef[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
  vfloat32m2_t p = __riscv_vfmv_v_f_f32m2(kCoef[0], vl);
  for (size_t i = 1; i < std::size(kCoef); i++)
    p = __riscv_vfmadd_vv_f32m2(p, r, __riscv_vfmv_v_f_f32m2(kCoef[i], vl), vl);
  // 2^n = 2^n1 * 2^n2 with n1 = n >> 1: both halves stay normal floats for n in [-150, 128].
  const vint32m2_t n1 = __riscv_vsra_vx_i32m2(n, 1, vl);
  const vint32m2_t n2 = __riscv_vsub_vv_i32m2(n, n1, vl);
  const auto pow2 = [vl](vint32m2_t e) {
    return __riscv_vreinterpret_v_i32m2_f32m2(
        __riscv_vsll_vx_i32m2(__riscv_vadd_vx_i32m2(e, 127, vl), 23, vl));
  };
  return __riscv_vfmul_vv_f32m2(__riscv_vfmul_vv_f32m2(p, pow2(n1), vl), pow2(n2), vl);
}

// A zeroed f32 accumulator over all lanes: loops then update it with _tu ops at their own vl.
inline vfloat32m4_t zero_lanes() { return __riscv_vfmv_v_f_f32m4(0.0f, __riscv_vsetvlmax_e32m4()); }

// Sum of all lanes of a tail-undisturbed accumulator (the once-per-row reduction).
inline float sum_lanes(vfloat32m4_t acc) {
  const vfloat32m1_t zero = __riscv_vfmv_s_f_f32m1(0.0f, 1);
  return __riscv_vfmv_f_s_f32m1_f32(
      __riscv_vfredusum_vs_f32m4_f32m1(acc, zero, __riscv_vsetvlmax_e32m4()));
}
inline float sum_lanes(vfloat32m2_t acc) {
  const vfloat32m1_t zero = __riscv_vfmv_s_f_f32m1(0.0f, 1);
  return __riscv_vfmv_f_s_f32m1_f32(
      __riscv_vfredusum_vs_f32m2_f32m1(acc, zero, __riscv_vsetvlmax_e32m2()));
}

// IEEE half bits -> f32 with integer ops (no Zvfh needed), exact for every input: normals by
// rebiasing the exponent, subnormals as mantissa * 2^-24, inf/NaN by forcing the exponent.
inline vfloat32m2_t fp16_to_f32_m2(vuint16m1_t h, size_t vl) {
  const vuint32m2_t u = __riscv_vzext_vf2_u32m2(h, vl);
  const vuint32m2_t sign = __riscv_vsll_vx_u32m2(__riscv_vand_vx_u32m2(u, 0x8000, vl), 16, vl);
  const vuint32m2_t em = __riscv_vand_vx_u32m2(u, 0x7fff, vl);
  vuint32m2_t bits = __riscv_vadd_vx_u32m2(__riscv_vsll_vx_u32m2(em, 13, vl), 112u << 23, vl);
  const vbool16_t special = __riscv_vmsgeu_vx_u32m2_b16(em, 0x7c00, vl);
  bits = __riscv_vor_vx_u32m2_mu(special, bits, __riscv_vsll_vx_u32m2(em, 13, vl), 0x7f800000, vl);
  const vbool16_t sub = __riscv_vmsltu_vx_u32m2_b16(em, 0x400, vl);
  const vfloat32m2_t subf = __riscv_vfmul_vf_f32m2(__riscv_vfcvt_f_xu_v_f32m2(em, vl), 0x1p-24f, vl);
  bits = __riscv_vmerge_vvm_u32m2(bits, __riscv_vreinterpret_v_f32m2_u32m2(subf), sub, vl);
  return __riscv_vreinterpret_v_u32m2_f32m2(__riscv_vor_vv_u32m2(bits, sign, vl));
}

// vl (<= VLMAX at e32 LMUL 4) IEEE halves at h -> f32, as two e32 LMUL 2 halves of the group.
inline vfloat32m4_t fp16_to_f32_m4(const uint16_t* h, size_t vl) {
  const size_t half = __riscv_vsetvlmax_e32m2();
  const size_t vl0 = vl < half ? vl : half;
  vfloat32m4_t out = __riscv_vundefined_f32m4();
  out = __riscv_vset_v_f32m2_f32m4(out, 0, fp16_to_f32_m2(__riscv_vle16_v_u16m1(h, vl0), vl0));
  if (vl > vl0) out = __riscv_vset_v_f32m2_f32m4(out, 1, fp16_to_f32_m2(__riscv_vle16_v_u16m1(h + vl0, vl - vl0), vl - vl0));
  return out;
}

}  // namespace hart::cpu::riscv
