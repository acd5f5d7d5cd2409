// MXFP4 (OCP microscaling): blocks of 32 E2M1 values (4-bit indices into kFp4Levels, packed as
// IQ4_NL packs them) under one shared E8M0 exponent.
#include <cmath>

#include "quant/block32.h"

namespace hart::quant {
namespace {

void levels(const block_mxfp4& b, int8_t* q) { lookup_nibbles(b.qs, kFp4Levels, q); }

// The index whose level times d is nearest x, the first one on ties.
uint8_t nearest_level(float x, float d) {
  uint8_t best = 0;
  float best_err = std::fabs(float(kFp4Levels[0]) * d - x);
  for (uint8_t i = 1; i < 16; i++) {
    const float err = std::fabs(float(kFp4Levels[i]) * d - x);
    if (err < best_err) best = i, best_err = err;
  }
  return best;
}

// ggml's quantize_row_mxfp4_ref: the exponent puts the block's largest magnitude in [4, 8) times
// 2^(e-127) (the top level 12 halved is 6), then every value takes its nearest level.
void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_mxfp4, QK_MXFP4>(src, dst, n, [](const float* x, block_mxfp4& b) {
    const float amax = abs_max(x, QK_MXFP4).amax;
    b.e = amax > 0 ? uint8_t(int(std::floor(std::log2(amax))) - 2 + 127) : 0;
    const float d = e8m0_to_f32_half(b.e);
    uint8_t idx[QK_MXFP4];
    for (int j = 0; j < QK_MXFP4; j++) idx[j] = nearest_level(x[j], d);
    pack_nibbles(idx, b.qs);
  });
}

}  // namespace

Codec codec_mxfp4() {
  return {.dequantize = dequantize_levels<block_mxfp4, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_levels<block_mxfp4, block_q8_0, levels>};
}

}  // namespace hart::quant
