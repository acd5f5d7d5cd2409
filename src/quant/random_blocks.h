// For tests: rows of IQ blocks with every bit random but a modest fp16 scale (random bits over all
// of d give infinities), and quantized random rows of any type.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "common/fp16.h"
#include "quant/quant.h"
#include "types/tensor_type.h"

namespace hart {

// The IQ types built on grids (the ones random_iq_blocks fills).
inline bool is_iq_grid_type(Type t) {
  return t == Type::IQ2_XXS || t == Type::IQ2_XS || t == Type::IQ2_S || t == Type::IQ3_XXS || t == Type::IQ3_S ||
         t == Type::IQ1_S || t == Type::IQ1_M;
}

// quantize_row for random test rows: the types whose quantizer needs an importance matrix get a
// uniform one (random weights have no activations to weigh them by).
inline void quantize_test_row(Type t, const float* x, void* dst, int64_t n) {
  const std::vector<float> importance(quantize_needs_importance(t) ? size_t(n) : 0, 1.0f);
  quantize_row(t, x, dst, n, importance.empty() ? nullptr : importance.data());
}

inline std::vector<uint8_t> random_iq_blocks(Type t, int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> q(row_size(t, n));
  for (uint8_t& b : q) b = uint8_t(rng());
  const size_t ts = type_info(t).type_size;
  for (size_t b = 0; b < q.size(); b += ts) {
    const fp16_t d = f32_to_fp16(0.01f + 0.001f * float(rng() % 32));
    if (t == Type::IQ1_M) {  // d's nibbles are the top of the four 16-bit scale words (bytes 49, 51, 53, 55)
      for (int w = 0; w < 4; w++) q[b + 49 + 2 * w] = uint8_t((q[b + 49 + 2 * w] & 0x0f) | ((d >> (4 * w)) & 15) << 4);
    } else {
      std::memcpy(&q[b], &d, 2);  // the other IQ blocks start with d
    }
  }
  return q;
}

}  // namespace hart
