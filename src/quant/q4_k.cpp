// Q4_K: super-blocks of 256 weights in 8 groups of 32. A weight is d*scale_g*level - dmin*min_g
// with 4-bit levels and 6-bit per-group scale and min under fp16 super-scales d and dmin.
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

void levels(const block_q4_K& b, int8_t* q) { unpack_k_nibbles(b.qs, q); }

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q4_K, QK_K>(src, dst, n, [](const float* x, block_q4_K& b) {
    uint8_t L[QK_K];
    quantize_scale_min_superblock(x, {.nmax = 15, .rmin = -1.f, .rdelta = 0.1f, .nstep = 20}, &b.d,
                                  &b.dmin, b.scales, L);
    pack_k_nibbles(L, b.qs);
  });
}

}  // namespace

Codec codec_q4_k() {
  return {.dequantize = dequantize_scale_min<block_q4_K, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q4_K, levels, scale_min_scales<block_q4_K>>};
}

}  // namespace hart::quant
