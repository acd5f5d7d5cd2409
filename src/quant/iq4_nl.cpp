// IQ4_NL: blocks of 32 weights whose 4-bit indices pick from a fixed non-linear table of int8
// values, times one fp16 scale. Dequantization and the Q8_0 dot product only (no quantizer).
#include "quant/block32.h"

namespace hart::quant {
namespace {

constexpr int8_t kValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                1,    13,   25,  38,  53,  69,  89,  113};

void levels(const block_iq4_nl& b, int8_t* q) {
  for (int j = 0; j < 16; j++) {
    q[j] = kValues[b.qs[j] & 0x0F];
    q[j + 16] = kValues[b.qs[j] >> 4];
  }
}

}  // namespace

Codec codec_iq4_nl() {
  return {.dequantize = dequantize_levels<block_iq4_nl, levels>,
          .quantize = nullptr,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_iq4_nl, block_q8_0, levels>};
}

}  // namespace hart::quant
