// Q5_0: blocks of 32 weights, 5-bit levels -16..15 (low nibbles + a 32-bit mask of fifth bits)
// times one fp16 scale.
#include "quant/block32.h"

namespace hart::quant {
namespace {

void levels(const block_q5_0& b, int8_t* q) {
  unpack_nibbles(b.qs, q, -16);
  add_fifth_bits(b.qh, q);
}

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q5_0, QK32>(src, dst, n, [](const float* x, block_q5_0& b) {
    uint8_t l[QK32];
    b.d = f32_to_fp16(symmetric_levels(x, 16, l));
    pack_nibbles(l, b.qs);
    pack_fifth_bits(l, b.qh);
  });
}

}  // namespace

Codec codec_q5_0() {
  return {.dequantize = dequantize_levels<block_q5_0, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_q5_0, block_q8_0, levels>};
}

}  // namespace hart::quant
