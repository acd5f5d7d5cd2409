// Internal: what IQ4_NL (one 32-weight block) and IQ4_XS (a 256-weight super-block of eight
// 32-weight blocks with 6-bit sub-scales) share: the level lookup of a packed 32-weight block and
// ggml's quantizer (quantize_row_iq4_nl_impl).
#pragma once

#include <cstdint>

#include "quant/block32.h"

namespace hart::quant {

// 16 bytes of indices -> the 32 levels of a block: low nibbles first, then high ones.
inline void iq4_levels(const uint8_t* qs, int8_t* q) { lookup_nibbles(qs, kIq4Levels, q); }

// Quantizes n = 32 or 256 weights x: fp16 scale *d, the 4-bit level indices in qs (32-weight
// blocks as IQ4_NL packs them), and for n = 256 the 8 sub-scales (scale + 32 in 6 bits: low
// nibbles in scales_l, high 2 bits in scales_h; both may be null for n = 32). importance: the n
// per-column importance weights, or nullptr.
void quantize_iq4(const float* x, int n, const float* importance, fp16_t* d, uint8_t* qs, uint8_t* scales_l,
                  uint16_t* scales_h);

}  // namespace hart::quant
