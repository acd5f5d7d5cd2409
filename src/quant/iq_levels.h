// The IQ types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) read as integers, for the
// reference codec and the optimized dot kernels alike: a super-block of 256 weights is 32 octets
// of 8 weights (each a grid entry and 8 sign bits) under 16 integer scales (one per 16 weights)
// and one float factor. Weight j of octet o is
//     factor * scale(o / 2) * level_j,   level_j = +-grid byte j   (sign bit j set: negative),
// and for the IQ1 types, whose grid bytes are -1, 0, 1 shifted by +-1/8 per octet,
//     level_j = 8 * grid byte j + (minus ? -1 : 1)   (the 1/8 is in the factor).
// Every ggml scale is d * (2s + 1) times a power of two, so factor = d * 2^-k and scale = 2s + 1
// reproduce ggml's dequantized floats bit for bit, and the integer sum of a super-block is exact.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/iq_grids.h"

namespace hart::quant {
// Internal linkage: every file gets its own copy, so the RVV objects (compiled with V) define no
// weak symbol a baseline caller could bind to (scripts/riscv-test).
namespace {

struct IqOctet {
  uint64_t grid;  // 8 bytes: magnitudes (IQ2, IQ3) or signed levels -1, 0, 1 (IQ1)
  uint8_t signs;  // bit j: weight j negative (IQ2, IQ3)
  bool minus;     // IQ1: shifted down by 1/8 (else up)
};

// ggml's sign bytes of IQ2_XXS / IQ2_XS / IQ3_XXS: 7 stored bits and an 8th that makes the number
// of set bits even.
constexpr uint8_t even_signs(uint32_t seven) { return uint8_t(seven | (uint32_t(std::popcount(seven) & 1) << 7)); }

inline uint32_t load_le32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t iq3_pair(const uint32_t* grid, unsigned a, unsigned b) { return grid[a] | uint64_t(grid[b]) << 32; }

// Specialized for each IQ block; empty for the other blocks (so `requires Iq<B>::...` can ask).
template <class Block>
struct Iq {};

// IQ2_XXS: per 32 weights two words, four 8-bit grid indices, then four 7-bit signs and a 4-bit scale.
template <>
struct Iq<block_iq2_xxs> {
  static constexpr bool kShifted = false;
  static float factor(const block_iq2_xxs& b) { return fp16_to_f32(b.d) * 0.125f; }
  static int scale(const block_iq2_xxs& b, int g) { return 2 * int(load_le32(b.qs + 4 * (g / 2) + 2) >> 28) + 1; }
  static IqOctet octet(const block_iq2_xxs& b, int o) {
    const uint8_t index = reinterpret_cast<const uint8_t*>(b.qs + 4 * (o / 4))[o % 4];
    const uint32_t meta = load_le32(b.qs + 4 * (o / 4) + 2);
    return {kIq2xxsGrid[index], even_signs((meta >> (7 * (o % 4))) & 127), false};
  }
};

// IQ2_XS and IQ2_S: a 4-bit scale per 16 weights; ggml's (s + 1/2) / 4 is (2s + 1) / 8.
template <class Block>
struct Iq2Nibbles {
  static constexpr bool kShifted = false;
  static float factor(const Block& b) { return fp16_to_f32(b.d) * 0.125f; }
  static int scale(const Block& b, int g) { return 2 * ((b.scales[g / 2] >> (4 * (g % 2))) & 15) + 1; }
};

// IQ2_XS: a 16-bit word per octet (9-bit index, 7-bit signs).
template <>
struct Iq<block_iq2_xs> : Iq2Nibbles<block_iq2_xs> {
  static IqOctet octet(const block_iq2_xs& b, int o) {
    return {kIq2xsGrid[b.qs[o] & 511], even_signs(b.qs[o] >> 9), false};
  }
};

// IQ2_S: 8 low index bits per octet in qs[0..32), 8 stored sign bits in qs[32..64), the index's
// 2 high bits in qh (2 per octet).
template <>
struct Iq<block_iq2_s> : Iq2Nibbles<block_iq2_s> {
  static IqOctet octet(const block_iq2_s& b, int o) {
    const unsigned high = (b.qh[o / 4] >> (2 * (o % 4))) & 3;
    return {kIq2sGrid[b.qs[o] | high << 8], b.qs[32 + o], false};
  }
};

// IQ3_XXS: two 8-bit indices of 4 weights per octet in qs[0..64), then per 32 weights a word of
// four 7-bit signs and a 4-bit scale; ggml's scale (s + 1/2) / 2 is (2s + 1) / 4.
template <>
struct Iq<block_iq3_xxs> {
  static constexpr bool kShifted = false;
  static float factor(const block_iq3_xxs& b) { return fp16_to_f32(b.d) * 0.25f; }
  static int scale(const block_iq3_xxs& b, int g) { return 2 * int(load_le32(b.qs + 64 + 4 * (g / 2)) >> 28) + 1; }
  static IqOctet octet(const block_iq3_xxs& b, int o) {
    const uint32_t meta = load_le32(b.qs + 64 + 4 * (o / 4));
    return {iq3_pair(kIq3xxsGrid, b.qs[2 * o], b.qs[2 * o + 1]), even_signs((meta >> (7 * (o % 4))) & 127), false};
  }
};

// IQ3_S: 9-bit indices (8 bits in qs, the 9th in qh: bit 2l, 2l+1 of qh[o / 4] for octet l of a
// 32-weight chunk), 8 stored sign bits per octet, a 4-bit scale per 32 weights.
template <>
struct Iq<block_iq3_s> {
  static constexpr bool kShifted = false;
  static float factor(const block_iq3_s& b) { return fp16_to_f32(b.d); }
  static int scale(const block_iq3_s& b, int g) { return 2 * ((b.scales[g / 4] >> (4 * ((g / 2) % 2))) & 15) + 1; }
  static IqOctet octet(const block_iq3_s& b, int o) {
    const unsigned h = b.qh[o / 4] >> (2 * (o % 4));
    return {iq3_pair(kIq3sGrid, b.qs[2 * o] | (h & 1) << 8, b.qs[2 * o + 1] | (h & 2) << 7), b.signs[o], false};
  }
};

// IQ1_S: 11-bit indices (8 bits in qs, 3 in qh[o / 4] bits 3l..3l+2), per 32 weights a 3-bit
// scale (qh bits 12..14) and the shift's sign (bit 15).
template <>
struct Iq<block_iq1_s> {
  static constexpr bool kShifted = true;
  static float factor(const block_iq1_s& b) { return fp16_to_f32(b.d) * 0.125f; }
  static int scale(const block_iq1_s& b, int g) { return 2 * ((b.qh[g / 2] >> 12) & 7) + 1; }
  static IqOctet octet(const block_iq1_s& b, int o) {
    const unsigned qh = b.qh[o / 4];
    return {kIq1sGrid[b.qs[o] | ((qh >> (3 * (o % 4))) & 7) << 8], 0, (qh & 0x8000) != 0};
  }
};

// IQ1_M: 11-bit indices (3 high bits and the shift's sign in a nibble of qh per octet), a 3-bit
// scale per 16 weights (four per 16-bit word of scales), and the fp16 d in the words' top nibbles.
template <>
struct Iq<block_iq1_m> {
  static constexpr bool kShifted = true;
  static uint16_t word(const block_iq1_m& b, int i) { return uint16_t(b.scales[2 * i] | b.scales[2 * i + 1] << 8); }
  static float factor(const block_iq1_m& b) {
    const unsigned d = (word(b, 0) >> 12) | ((word(b, 1) >> 8) & 0xf0) | ((word(b, 2) >> 4) & 0xf00) | (word(b, 3) & 0xf000);
    return fp16_to_f32(fp16_t(d)) * 0.125f;
  }
  static int scale(const block_iq1_m& b, int g) { return 2 * ((word(b, g / 4) >> (3 * (g % 4))) & 7) + 1; }
  static IqOctet octet(const block_iq1_m& b, int o) {
    const unsigned nibble = (b.qh[o / 2] >> (4 * (o % 2))) & 15;
    return {kIq1sGrid[b.qs[o] | (nibble & 7) << 8], 0, (nibble & 8) != 0};
  }
};

// Weight j's integer level in octet `oct` (see the top).
template <class Block>
int iq_level(const IqOctet& oct, int j) {
  const int g = int(int8_t(oct.grid >> (8 * j)));
  if constexpr (Iq<Block>::kShifted) return 8 * g + (oct.minus ? -1 : 1);
  else return (oct.signs >> j) & 1 ? -(g & 0xff) : (g & 0xff);
}

}  // namespace
}  // namespace hart::quant
