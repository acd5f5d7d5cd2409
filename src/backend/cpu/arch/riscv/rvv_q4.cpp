// 4- and 5-bit block types against Q8_0 / Q8_1 activations: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
// MXFP4.
// Element j < 16 is the low nibble of qs[j], element j + 16 the high one; the Q5 types' fifth
// bits (bit j of qh, little-endian) load directly as a vector mask (vlm).
#include <riscv_vector.h>

#include "backend/cpu/arch/riscv/rvv_block32.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

// Unsigned 4-bit (or, with qh, 5-bit) levels of a block.
template <class Block>
void nibbles(const Block& b, vuint8m1_t& lo, vuint8m1_t& hi) {
  const vuint8m1_t u = __riscv_vle8_v_u8m1(b.qs, kHalf);
  lo = __riscv_vand_vx_u8m1(u, 0x0F, kHalf);
  hi = __riscv_vsrl_vx_u8m1(u, 4, kHalf);
  if constexpr (requires { b.qh; }) {
    lo = __riscv_vor_vx_u8m1_mu(__riscv_vlm_v_b8(b.qh, kHalf), lo, lo, 16, kHalf);
    hi = __riscv_vor_vx_u8m1_mu(__riscv_vlm_v_b8(b.qh + 2, kHalf), hi, hi, 16, kHalf);
  }
}

// Levels = unsigned level + kOffset (-8 for Q4_0, -16 for Q5_0, 0 for the affine types).
template <class Block, int kOffset>
void offset_levels(const Block& b, vint8m1_t& lo, vint8m1_t& hi) {
  vuint8m1_t ulo, uhi;
  nibbles(b, ulo, uhi);
  lo = __riscv_vadd_vx_i8m1(__riscv_vreinterpret_v_u8m1_i8m1(ulo), kOffset, kHalf);
  hi = __riscv_vadd_vx_i8m1(__riscv_vreinterpret_v_u8m1_i8m1(uhi), kOffset, kHalf);
}

// IQ4_NL and MXFP4: the nibble indexes a fixed table of 16 levels (kIq4Levels, kFp4Levels).
template <class Block, const int8_t* kTable>
void table_levels(const Block& b, vint8m1_t& lo, vint8m1_t& hi) {
  const vint8m1_t table = __riscv_vle8_v_i8m1(kTable, kHalf);
  vuint8m1_t ulo, uhi;
  nibbles(b, ulo, uhi);
  lo = __riscv_vrgather_vv_i8m1(table, ulo, kHalf);
  hi = __riscv_vrgather_vv_i8m1(table, uhi, kHalf);
}

}  // namespace

void fill_rvv_q4(Kernels& k) {
  k.dot[uint32_t(Type::Q4_0)] = {Type::Q8_0, vec_dot_block32<block_q4_0, block_q8_0, offset_levels<block_q4_0, -8>>};
  k.dot[uint32_t(Type::Q4_1)] = {Type::Q8_1, vec_dot_block32<block_q4_1, block_q8_1, offset_levels<block_q4_1, 0>>};
  k.dot[uint32_t(Type::Q5_0)] = {Type::Q8_0, vec_dot_block32<block_q5_0, block_q8_0, offset_levels<block_q5_0, -16>>};
  k.dot[uint32_t(Type::Q5_1)] = {Type::Q8_1, vec_dot_block32<block_q5_1, block_q8_1, offset_levels<block_q5_1, 0>>};
  k.dot[uint32_t(Type::IQ4_NL)] =
      {Type::Q8_0, vec_dot_block32<block_iq4_nl, block_q8_0, table_levels<block_iq4_nl, kIq4Levels>>};
  k.dot[uint32_t(Type::MXFP4)] =
      {Type::Q8_0, vec_dot_block32<block_mxfp4, block_q8_0, table_levels<block_mxfp4, kFp4Levels>>};
}

}  // namespace hart::cpu::riscv
