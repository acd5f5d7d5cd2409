// Internal: what the ternary types TQ1_0 and TQ2_0 (BitNet b1.58, TriLMs) share: 256 weights
// d * {-1, 0, 1} under one fp16 scale d = the block's largest magnitude, and the dot product
// against Q8_K as one integer sum per super-block. Each type only says how it packs the trits.
#pragma once

#include <cmath>
#include <cstdint>

#include "quant/blocks.h"
#include "quant/codec.h"

namespace hart::quant {

// Levels(block, q) writes the 256 levels -1, 0, 1 of a super-block in element order.
template <class Block>
using TritLevelsFn = void (*)(const Block&, int8_t*);
// Pack(trits, block) stores 256 trits 0, 1, 2 (level + 1) in element order.
template <class Block>
using TritPackFn = void (*)(const uint8_t*, Block&);

template <class Block, TritLevelsFn<Block> Levels>
void dequantize_ternary(const void* src, float* dst, int64_t n) {
  for_each_block<Block, QK_K>(src, dst, n, [](const Block& b, float* y) {
    int8_t q[QK_K];
    Levels(b, q);
    const float d = fp16_to_f32(b.d);
    for (int j = 0; j < QK_K; j++) y[j] = float(q[j]) * d;
  });
}

// ggml's quantize_row_tq{1,2}_0_ref: round(x / amax) (half away from zero) to a trit.
template <class Block, TritPackFn<Block> Pack>
void quantize_ternary(const float* src, void* dst, int64_t n) {
  for_each_block<Block, QK_K>(src, dst, n, [](const float* x, Block& b) {
    float amax = 0;
    for (int j = 0; j < QK_K; j++) amax = std::fmax(amax, std::fabs(x[j]));
    const float id = amax != 0 ? 1.0f / amax : 0.0f;
    b.d = f32_to_fp16(amax);
    uint8_t trits[QK_K];
    for (int j = 0; j < QK_K; j++) trits[j] = uint8_t(std::lround(x[j] * id) + 1);
    Pack(trits, b);
  });
}

// ggml's generic order: per super-block sum(level * a) in integers, times d_w * d_x in float.
template <class Block, TritLevelsFn<Block> Levels>
void vec_dot_ternary(int64_t n, float* out, const void* w, const void* x) {
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const block_q8_K*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; i++) {
    int8_t q[QK_K];
    Levels(wb[i], q);
    int isum = 0;
    for (int j = 0; j < QK_K; j++) isum += int(q[j]) * int(xb[i].qs[j]);
    sum += float(isum) * (fp16_to_f32(wb[i].d) * xb[i].d);
  }
  *out = sum;
}

template <class Block, TritLevelsFn<Block> Levels, TritPackFn<Block> Pack>
Codec ternary_codec() {
  return {.dequantize = dequantize_ternary<Block, Levels>,
          .quantize = quantize_ternary<Block, Pack>,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_ternary<Block, Levels>};
}

}  // namespace hart::quant
