// IQ4_NL: blocks of 32 weights whose 4-bit indices pick from a fixed non-linear table of int8
// values (kIq4Levels), times one fp16 scale.
#include "quant/block32.h"
#include "quant/iq4_util.h"

namespace hart::quant {
namespace {

void levels(const block_iq4_nl& b, int8_t* q) { iq4_levels(b.qs, q); }

// Importance weights for block i are importance[QK4_NL * i ..] (nullptr: none).
void quantize_blocks(const float* src, void* dst, int64_t n, const float* importance) {
  auto* b = static_cast<block_iq4_nl*>(dst);
  for (int64_t i = 0; i < n / QK4_NL; i++)
    quantize_iq4(src + QK4_NL * i, QK4_NL, importance ? importance + QK4_NL * i : nullptr, &b[i].d, b[i].qs, nullptr, nullptr);
}

void quantize(const float* src, void* dst, int64_t n) { quantize_blocks(src, dst, n, nullptr); }

}  // namespace

Codec codec_iq4_nl() {
  return {.dequantize = dequantize_levels<block_iq4_nl, levels>,
          .quantize = quantize,
          .quantize_weighted = quantize_blocks,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_iq4_nl, block_q8_0, levels>};
}

}  // namespace hart::quant
