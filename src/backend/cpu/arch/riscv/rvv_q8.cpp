// Q8_0 weights, and the Q8_0 / Q8_1 activation quantizers (bit-exact with quantize_row: the same
// scalar scale arithmetic, and vfcvt with round-to-nearest-max-magnitude is std::round).
#include <riscv_vector.h>

#include <cstring>

#include "backend/cpu/arch/riscv/rvv_block32.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

void q8_levels(const block_q8_0& b, vint8m1_t& lo, vint8m1_t& hi) {
  lo = __riscv_vle8_v_i8m1(b.qs, kHalf);
  hi = __riscv_vle8_v_i8m1(b.qs + kHalf, kHalf);
}

// x (n,) f32 -> blocks of 32 int8 with d = amax / 127 (Q8_1 also s = d * sum).
template <class Block>
void quantize_q8(const float* x, void* y, int64_t n) {
  auto* out = static_cast<Block*>(y);
  constexpr size_t vl = 32;  // e32m8 holds 32 lanes at every VLEN >= 128
  const vfloat32m1_t zero = __riscv_vfmv_s_f_f32m1(0.0f, 1);
  for (int64_t i = 0; i < n / 32; i++) {
    Block& b = out[i];
    const vfloat32m8_t v = __riscv_vle32_v_f32m8(x + i * 32, vl);
    const float amax =
        __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmax_vs_f32m8_f32m1(__riscv_vfabs_v_f32m8(v, vl), zero, vl));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const vint32m8_t q = __riscv_vfcvt_x_f_v_i32m8_rm(__riscv_vfmul_vf_f32m8(v, id, vl), __RISCV_FRM_RMM, vl);
    __riscv_vse8_v_i8m2(b.qs, __riscv_vncvt_x_x_w_i8m2(__riscv_vncvt_x_x_w_i16m4(q, vl), vl), vl);
    b.d = f32_to_fp16(d);
    if constexpr (requires { b.s; }) {
      const vint32m1_t z = __riscv_vmv_s_x_i32m1(0, 1);
      const int sum = __riscv_vmv_x_s_i32m1_i32(__riscv_vredsum_vs_i32m8_i32m1(q, z, vl));
      b.s = f32_to_fp16(float(sum) * d);
    }
  }
}

}  // namespace

void fill_rvv_q8(Kernels& k) {
  k.dot[uint32_t(Type::Q8_0)] = {Type::Q8_0, vec_dot_block32<block_q8_0, block_q8_0, q8_levels>};
  k.from_f32[uint32_t(Type::Q8_0)] = quantize_q8<block_q8_0>;
  k.from_f32[uint32_t(Type::Q8_1)] = quantize_q8<block_q8_1>;
}

}  // namespace hart::cpu::riscv
