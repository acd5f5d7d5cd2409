// Q5_1: blocks of 32 weights, 5-bit levels 0..31 (low nibbles + a mask of fifth bits) times an
// fp16 scale plus an fp16 minimum.
#include "quant/block32.h"

namespace hart::quant {
namespace {

void levels(const block_q5_1& b, int8_t* q) {
  unpack_nibbles(b.qs, q, 0);
  add_fifth_bits(b.qh, q);
}

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q5_1, QK32>(src, dst, n, [](const float* x, block_q5_1& b) {
    uint8_t l[QK32];
    float min;
    b.d = f32_to_fp16(affine_levels(x, 31, l, &min));
    b.m = f32_to_fp16(min);
    pack_nibbles(l, b.qs);
    pack_fifth_bits(l, b.qh);
  });
}

}  // namespace

Codec codec_q5_1() {
  return {.dequantize = dequantize_levels<block_q5_1, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_1,
          .vec_dot = vec_dot_levels<block_q5_1, block_q8_1, levels>};
}

}  // namespace hart::quant
