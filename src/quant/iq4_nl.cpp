// IQ4_NL: blocks of 32 weights whose 4-bit indices pick from a fixed non-linear table of int8
// values (kIq4Levels), times one fp16 scale.
#include "quant/block32.h"
#include "quant/iq4_util.h"

namespace hart::quant {
namespace {

void levels(const block_iq4_nl& b, int8_t* q) { iq4_levels(b.qs, q); }

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_iq4_nl, QK4_NL>(src, dst, n, [](const float* x, block_iq4_nl& b) {
    quantize_iq4(x, QK4_NL, &b.d, b.qs, nullptr, nullptr);
  });
}

}  // namespace

Codec codec_iq4_nl() {
  return {.dequantize = dequantize_levels<block_iq4_nl, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_iq4_nl, block_q8_0, levels>};
}

}  // namespace hart::quant
