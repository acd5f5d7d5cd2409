// Q5_K: Q4_K's layout (see q4_k.cpp) with a fifth bit per weight: levels 0..31.
#include "quant/k_quant_util.h"

namespace hart::quant {
namespace {

// Q4_K's nibbles plus a fifth bit: for 64-weight chunk c, bit 2c of qh[l] for weight l, bit 2c+1
// for weight 32 + l.
void levels(const block_q5_K& b, int8_t* q) {
  unpack_k_nibbles(b.qs, q);
  for (int c = 0; c < 4; c++) {
    for (int l = 0; l < 32; l++) {
      q[64 * c + l] = int8_t(q[64 * c + l] + ((b.qh[l] >> (2 * c)) & 1) * 16);
      q[64 * c + 32 + l] = int8_t(q[64 * c + 32 + l] + ((b.qh[l] >> (2 * c + 1)) & 1) * 16);
    }
  }
}

// importance: nullptr for ggml's quantize_row_q5_K_ref, else its _impl.
void quantize_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  auto* blocks = static_cast<block_q5_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; i++) {
    block_q5_K& b = blocks[i];
    uint8_t L[QK_K];
    if (importance)
      quantize_scale_min_superblock_weighted(src + QK_K * i, importance + QK_K * i, 31, &b.d, &b.dmin, b.scales, L);
    else
      quantize_scale_min_superblock(src + QK_K * i, {.nmax = 31, .rmin = -0.5f, .rdelta = 0.1f, .nstep = 15}, &b.d,
                                    &b.dmin, b.scales, L);
    pack_k_nibbles(L, b.qs);
    std::memset(b.qh, 0, sizeof(b.qh));
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++)
        b.qh[l] |=
            uint8_t(((L[64 * c + l] >> 4) << (2 * c)) | ((L[64 * c + 32 + l] >> 4) << (2 * c + 1)));
  }
}

void quantize(const float* src, void* dst, int64_t n) { quantize_weighted(src, dst, n, nullptr); }

}  // namespace

Codec codec_q5_k() {
  return {.dequantize = dequantize_scale_min<block_q5_K, levels>,
          .quantize = quantize,
          .quantize_weighted = quantize_weighted,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q5_K, levels, scale_min_scales<block_q5_K>>};
}

}  // namespace hart::quant
