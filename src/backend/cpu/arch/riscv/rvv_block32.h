// The RVV integer dot product shared by the 32-element block types (Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, MXFP4) against Q8_0 / Q8_1 activations. Each type only says how to unpack its levels.
//
// Per block, the 32 products are formed in 16 int16 lanes (elements j and j+16 share a lane:
// |w*x| <= 127*128, so a pair still fits int16), widened to f32 and accumulated with the block's
// scale dw*dx into f32 lanes that are reduced once per row. 16 lanes fit every VLEN >= 128 at
// LMUL 1. The scales of a chunk of blocks are gathered with strided loads and converted at once.
#pragma once

#include <riscv_vector.h>

#include <algorithm>
#include <cstdint>

#include "backend/cpu/arch/riscv/rvv_math.h"
#include "quant/blocks.h"

namespace hart::cpu::riscv {

constexpr size_t kHalf = 16;         // lanes per half block
constexpr size_t kScaleChunk = 64;   // blocks whose scales are converted together

// Levels(block, lo, hi) unpacks a block's signed levels: elements 0..15 into lo, 16..31 into hi
// (vl = kHalf). Vector types are sizeless, so they come back through references.
template <class Block>
using LevelsFn = void (*)(const Block&, vint8m1_t& lo, vint8m1_t& hi);

template <class Block>
concept AffineBlock = requires(const Block& b) { b.m; };

// One fp16 field of vl consecutive blocks (`first` points at it in the first block), as f32.
template <class Block>
vfloat32m2_t load_fp16_field(const fp16_t* first, size_t vl) {
  static_assert(sizeof(Block) % 2 == 0, "fp16 fields must stay 2-byte aligned across blocks");
  return fp16_to_f32_m2(__riscv_vlse16_v_u16m1(first, sizeof(Block), vl), vl);
}

// out = sum over blocks of dw*dx * sum_j(level_j * x_j) [+ mw * sx for affine weight types].
template <class WBlock, class ABlock, LevelsFn<WBlock> Levels>
void vec_dot_block32(int64_t n, float* out, const void* wv, const void* xv) {
  const auto* w = static_cast<const WBlock*>(wv);
  const auto* x = static_cast<const ABlock*>(xv);
  const size_t nb = size_t(n) / 32;
  vfloat32m4_t acc = zero_lanes();
  vfloat32m2_t mins = __riscv_vfmv_v_f_f32m2(0.0f, __riscv_vsetvlmax_e32m2());
  float scale[kScaleChunk];
  for (size_t b0 = 0, nc; b0 < nb; b0 += nc) {
    nc = __riscv_vsetvl_e16m1(std::min(nb - b0, kScaleChunk));
    if constexpr (requires { w->e; }) {  // MXFP4: the halved E8M0 exponent, one block at a time
      for (size_t b = 0; b < nc; b++) scale[b] = e8m0_to_f32_half(w[b0 + b].e) * fp16_to_f32(x[b0 + b].d);
    } else {
      const vfloat32m2_t dw = load_fp16_field<WBlock>(&w[b0].d, nc);
      const vfloat32m2_t dx = load_fp16_field<ABlock>(&x[b0].d, nc);
      __riscv_vse32_v_f32m2(scale, __riscv_vfmul_vv_f32m2(dw, dx, nc), nc);
    }
    if constexpr (AffineBlock<WBlock>) {
      const vfloat32m2_t mw = load_fp16_field<WBlock>(&w[b0].m, nc);
      const vfloat32m2_t sx = load_fp16_field<ABlock>(&x[b0].s, nc);
      mins = __riscv_vfmacc_vv_f32m2_tu(mins, mw, sx, nc);
    }
    for (size_t b = 0; b < nc; b++) {
      vint8m1_t lo, hi;
      Levels(w[b0 + b], lo, hi);
      const int8_t* xq = x[b0 + b].qs;
      vint16m2_t p = __riscv_vwmul_vv_i16m2(lo, __riscv_vle8_v_i8m1(xq, kHalf), kHalf);
      p = __riscv_vwmacc_vv_i16m2(p, hi, __riscv_vle8_v_i8m1(xq + kHalf, kHalf), kHalf);
      acc = __riscv_vfmacc_vf_f32m4_tu(acc, scale[b], __riscv_vfwcvt_f_x_v_f32m4(p, kHalf), kHalf);
    }
  }
  *out = sum_lanes(acc) + (AffineBlock<WBlock> ? sum_lanes(mins) : 0.0f);
}

}  // namespace hart::cpu::riscv
