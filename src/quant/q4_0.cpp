// Q4_0: blocks of 32 weights, 4-bit levels -8..7 times one fp16 scale.
#include "quant/block32.h"

namespace hart::quant {
namespace {

void levels(const block_q4_0& b, int8_t* q) { unpack_nibbles(b.qs, q, -8); }

// ggml's generic Q4_0 dot orders the block product as (sumi*dw)*dx, unlike the other types.
float combine(const block_q4_0& w, const block_q8_0& x, int sumi) {
  return float(sumi) * fp16_to_f32(w.d) * fp16_to_f32(x.d);
}

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q4_0, QK32>(src, dst, n, [](const float* x, block_q4_0& b) {
    uint8_t l[QK32];
    b.d = f32_to_fp16(symmetric_levels(x, 8, l));
    pack_nibbles(l, b.qs);
  });
}

}  // namespace

Codec codec_q4_0() {
  return {.dequantize = dequantize_levels<block_q4_0, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_q4_0, block_q8_0, levels, combine>};
}

}  // namespace hart::quant
