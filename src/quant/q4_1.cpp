// Q4_1: blocks of 32 weights, 4-bit levels 0..15 times an fp16 scale plus an fp16 minimum.
#include "quant/block32.h"

namespace hart::quant {
namespace {

void levels(const block_q4_1& b, int8_t* q) { unpack_nibbles(b.qs, q, 0); }

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q4_1, QK32>(src, dst, n, [](const float* x, block_q4_1& b) {
    uint8_t l[QK32];
    float min;
    b.d = f32_to_fp16(affine_levels(x, 15, l, &min));
    b.m = f32_to_fp16(min);
    pack_nibbles(l, b.qs);
  });
}

}  // namespace

Codec codec_q4_1() {
  return {.dequantize = dequantize_levels<block_q4_1, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_1,
          .vec_dot = vec_dot_levels<block_q4_1, block_q8_1, levels>};
}

}  // namespace hart::quant
