// The codecs of the IQ types, one mechanism over iq_levels.h's integer reading: dequantization
// bit-exact with ggml's, and Q8_K dot products with an exact integer sum per super-block scaled
// once in float. Their quantizers (which need an importance matrix) are in iq_quantize.h.
#include "quant/codec.h"
#include "quant/iq_levels.h"
#include "quant/iq_quantize.h"

namespace hart::quant {
namespace {

template <class Block>
void dequantize(const void* src, float* dst, int64_t n) {
  for_each_block<Block, QK_K>(src, dst, n, [](const Block& b, float* y) {
    const float factor = Iq<Block>::factor(b);
    for (int o = 0; o < QK_K / 8; o++) {
      const float dl = factor * float(Iq<Block>::scale(b, o / 2));
      const IqOctet oct = Iq<Block>::octet(b, o);
      for (int j = 0; j < 8; j++) y[8 * o + j] = dl * float(iq_level<Block>(oct, j));
    }
  });
}

template <class Block>
void vec_dot(int64_t n, float* out, const void* w, const void* x) {
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const block_q8_K*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK_K; i++) {
    int sumi = 0;
    for (int g = 0; g < QK_K / 16; g++) {
      int group = 0;
      for (int h = 0; h < 2; h++) {
        const IqOctet oct = Iq<Block>::octet(wb[i], 2 * g + h);
        for (int j = 0; j < 8; j++) group += iq_level<Block>(oct, j) * int(xb[i].qs[16 * g + 8 * h + j]);
      }
      sumi += Iq<Block>::scale(wb[i], g) * group;
    }
    sum += Iq<Block>::factor(wb[i]) * xb[i].d * float(sumi);
  }
  *out = sum;
}

// `weighted` without `plain`: ggml refuses to quantize the type without importance weights.
template <class Block>
Codec iq_codec(QuantizeFn plain, QuantizeWeightedFn weighted) {
  return {.dequantize = dequantize<Block>, .quantize = plain, .quantize_weighted = weighted, .dot_type = Type::Q8_K,
          .vec_dot = vec_dot<Block>};
}

// The quantizers whose ggml version works without importance weights (x^2 then).
template <QuantizeWeightedFn F>
void unweighted(const float* src, void* dst, int64_t n) { F(src, dst, n, nullptr); }

}  // namespace

Codec codec_iq2_xxs() { return iq_codec<block_iq2_xxs>(nullptr, quantize_iq2_xxs); }
Codec codec_iq2_xs() { return iq_codec<block_iq2_xs>(nullptr, quantize_iq2_xs); }
Codec codec_iq2_s() { return iq_codec<block_iq2_s>(unweighted<quantize_iq2_s>, quantize_iq2_s); }
Codec codec_iq3_xxs() { return iq_codec<block_iq3_xxs>(unweighted<quantize_iq3_xxs>, quantize_iq3_xxs); }
Codec codec_iq3_s() { return iq_codec<block_iq3_s>(unweighted<quantize_iq3_s>, quantize_iq3_s); }
Codec codec_iq1_s() { return iq_codec<block_iq1_s>(nullptr, quantize_iq1_s); }
Codec codec_iq1_m() { return iq_codec<block_iq1_m>(unweighted<quantize_iq1_m>, quantize_iq1_m); }

}  // namespace hart::quant
