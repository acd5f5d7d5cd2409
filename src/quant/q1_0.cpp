// Q1_0: blocks of 128 weights stored as their signs, bit j of the block for weight j (set: +d,
// clear: -d), under one fp16 scale d, the mean magnitude of the block.
#include <cmath>

#include "quant/q8_0_groups.h"

namespace hart::quant {
namespace {

void levels(const block_q1_0& b, int8_t* q) {
  for (int j = 0; j < QK1_0; j++) q[j] = (b.qs[j / 8] >> (j % 8)) & 1 ? 1 : -1;
}

// ggml's quantize_row_q1_0_ref: d = sum |x| / 128 (summed in order); a weight >= 0 sets its bit.
void quantize(const float* src, void* dst, int64_t n) {
  for_each_block<block_q1_0, QK1_0>(src, dst, n, [](const float* x, block_q1_0& b) {
    float sum_abs = 0;
    for (int j = 0; j < QK1_0; j++) sum_abs += std::fabs(x[j]);
    b.d = f32_to_fp16(sum_abs / QK1_0);
    for (uint8_t& byte : b.qs) byte = 0;
    for (int j = 0; j < QK1_0; j++)
      if (x[j] >= 0.0f) b.qs[j / 8] = uint8_t(b.qs[j / 8] | (1 << (j % 8)));
  });
}

}  // namespace

Codec codec_q1_0() {
  return {.dequantize = dequantize_groups<block_q1_0, QK1_0, levels>,
          .quantize = quantize,
          .dot_type = Type::Q8_0,
          .vec_dot = vec_dot_groups<block_q1_0, QK1_0, levels>};
}

}  // namespace hart::quant
