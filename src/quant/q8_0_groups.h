// Internal: what Q1_0 and Q2_0 share. A block holds QK weights (128, 64) as small signed levels
// under one fp16 scale and pairs with QK / 32 Q8_0 activation blocks: ggml's generic dot sums each
// 32-element group in integers, scales the group's sum by its activation d, and the block's sum of
// those by the weight d.
#pragma once

#include <cstdint>

#include "quant/blocks.h"
#include "quant/codec.h"

namespace hart::quant {

// Levels(block, q) writes the block's QK signed integer levels in element order.
template <class Block, int QK, void (*Levels)(const Block&, int8_t*)>
void dequantize_groups(const void* src, float* dst, int64_t n) {
  for_each_block<Block, QK>(src, dst, n, [](const Block& b, float* y) {
    int8_t q[QK];
    Levels(b, q);
    const float d = fp16_to_f32(b.d);
    for (int j = 0; j < QK; j++) y[j] = float(q[j]) * d;
  });
}

template <class Block, int QK, void (*Levels)(const Block&, int8_t*)>
void vec_dot_groups(int64_t n, float* out, const void* w, const void* x) {
  constexpr int kGroups = QK / QK8_0;
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const block_q8_0*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK; i++) {
    int8_t q[QK];
    Levels(wb[i], q);
    float block_sum = 0;
    for (int g = 0; g < kGroups; g++) {
      const block_q8_0& a = xb[i * kGroups + g];
      int isum = 0;
      for (int j = 0; j < QK8_0; j++) isum += int(q[g * QK8_0 + j]) * int(a.qs[j]);
      block_sum += fp16_to_f32(a.d) * float(isum);
    }
    sum += fp16_to_f32(wb[i].d) * block_sum;
  }
  *out = sum;
}

}  // namespace hart::quant
