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

void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q5_K, QK_K>(src, dst, n, [](const float* x, block_q5_K& b) {
    uint8_t L[QK_K];
    quantize_scale_min_superblock(x, {.nmax = 31, .rmin = -0.5f, .rdelta = 0.1f, .nstep = 15}, &b.d,
                                  &b.dmin, b.scales, L);
    pack_k_nibbles(L, b.qs);
    std::memset(b.qh, 0, sizeof(b.qh));
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++)
        b.qh[l] |=
            uint8_t(((L[64 * c + l] >> 4) << (2 * c)) | ((L[64 * c + 32 + l] >> 4) << (2 * c + 1)));
  });
}

}  // namespace

Codec codec_q5_k() {
  return {.dequantize = dequantize_scale_min<block_q5_K, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_K,
          .vec_dot = vec_dot_k<block_q5_K, levels, scale_min_scales<block_q5_K>>};
}

}  // namespace hart::quant
