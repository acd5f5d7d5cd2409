// For tests: rows of IQ blocks with every bit random but a modest fp16 scale (the IQ types are
// quantized only with an importance matrix, and random bits over all of d give infinities).
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "common/fp16.h"
#include "types/tensor_type.h"

namespace hart {

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
