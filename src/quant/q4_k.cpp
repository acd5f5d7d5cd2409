// Q4_K: super-blocks of 256 weights in 8 groups of 32. A weight is d*scale_g*level - dmin*min_g
// with 4-bit levels and 6-bit per-group scale and min under fp16 super-scales d and dmin.
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

void levels(const block_q4_K& b, int8_t* q) { unpack_k_nibbles(b.qs, q); }

// importance: nullptr for ggml's quantize_row_q4_K_ref, else its _impl.
void quantize_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  auto* blocks = static_cast<block_q4_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; i++) {
    block_q4_K& b = blocks[i];
    uint8_t L[QK_K];
    if (importance)
      quantize_scale_min_superblock_weighted(src + QK_K * i, importance + QK_K * i, 15, &b.d, &b.dmin, b.scales, L);
    else
      quantize_scale_min_superblock(src + QK_K * i, {.nmax = 15, .rmin = -1.f, .rdelta = 0.1f, .nstep = 20}, &b.d,
                                    &b.dmin, b.scales, L);
    pack_k_nibbles(L, b.qs);
  }
}

void quantize(const float* src, void* dst, int64_t n) { quantize_weighted(src, dst, n, nullptr); }

}  // namespace

Codec codec_q4_k() {
  return {.dequantize = dequantize_scale_min<block_q4_K, levels>,
          .quantize = quantize,
          .quantize_weighted = quantize_weighted,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q4_K, levels, scale_min_scales<block_q4_K>>};
}

}  // namespace hart::quant
