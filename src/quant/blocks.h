// The block layouts of the quantized types, identical to ggml's, so that GGUF weights are read
// in place by the reference codecs here and by the optimized kernels of the backends.
#pragma once

#include <bit>
#include <cstdint>

#include "common/fp16.h"

namespace hart {

constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK4_NL = 32, QK_MXFP4 = 32, QK1_0 = 128, QK2_0 = 64;
constexpr int QK_K = 256, K_SCALE_SIZE = 12;

struct block_q4_0 { fp16_t d; uint8_t qs[QK4_0 / 2]; };
struct block_q4_1 { fp16_t d, m; uint8_t qs[QK4_1 / 2]; };
struct block_q5_0 { fp16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };
struct block_q5_1 { fp16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
struct block_q8_0 { fp16_t d; int8_t qs[QK8_0]; };
struct block_q8_1 { fp16_t d, s; int8_t qs[QK8_1]; };  // s = d * sum(qs)
struct block_iq4_nl { fp16_t d; uint8_t qs[QK4_NL / 2]; };
struct block_q2_K { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; fp16_t d, dmin; };
struct block_q3_K { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; fp16_t d; };
struct block_q4_K { fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
struct block_q5_K { fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
struct block_q6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; fp16_t d; };
struct block_q8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };
struct block_iq4_xs { fp16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; };
// Ternary: qs holds 5 trits per byte (240 weights), qh 4 per byte (the last 16).
struct block_tq1_0 { uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; uint8_t qh[QK_K / 64]; fp16_t d; };
struct block_tq2_0 { uint8_t qs[QK_K / 4]; fp16_t d; };
struct block_mxfp4 { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; };  // e: E8M0 shared exponent
// One bit (the sign: -d or d) and two bits (levels -1..2) per weight under one fp16 scale.
struct block_q1_0 { fp16_t d; uint8_t qs[QK1_0 / 8]; };
struct block_q2_0 { fp16_t d; uint8_t qs[QK2_0 / 4]; };
// The IQ types: grid indices, sign bits and scales of 256 weights (src/quant/iq_levels.h decodes them).
struct block_iq2_xxs { fp16_t d; uint16_t qs[QK_K / 8]; };
struct block_iq2_xs { fp16_t d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; };
struct block_iq2_s { fp16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t scales[QK_K / 32]; };
struct block_iq3_xxs { fp16_t d; uint8_t qs[3 * QK_K / 8]; };
struct block_iq3_s { fp16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t signs[QK_K / 8]; uint8_t scales[QK_K / 64]; };
struct block_iq1_s { fp16_t d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; };
struct block_iq1_m { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t scales[QK_K / 32]; };  // d in scales' top nibbles

// The 16 non-linear int8 levels that IQ4_NL and IQ4_XS indices pick from (ggml's kvalues_iq4nl).
// Not inline: each file keeps an internal copy, where an inline variable would be a weak symbol,
// which scripts/riscv-test forbids in the RVV objects.
constexpr int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};

// MXFP4's E2M1 values, doubled to integers (ggml's kvalues_mxfp4); the scale is halved to match.
constexpr int8_t kFp4Levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128): half of E8M0's 2^(e - 127), subnormal for e < 2 (ggml_e8m0_to_fp32_half).
// static, for the reason kIq4Levels is not inline.
static inline float e8m0_to_f32_half(uint8_t e) {
  return std::bit_cast<float>(e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23);
}

static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_1) == 20);
static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24);
static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_1) == 36 && sizeof(block_iq4_nl) == 18);
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110);
static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176 && sizeof(block_q6_K) == 210);
static_assert(sizeof(block_q8_K) == 292 && sizeof(block_iq4_xs) == 136);
static_assert(sizeof(block_tq1_0) == 54 && sizeof(block_tq2_0) == 66 && sizeof(block_mxfp4) == 17);
static_assert(sizeof(block_q1_0) == 18 && sizeof(block_q2_0) == 18);
static_assert(sizeof(block_iq2_xxs) == 66 && sizeof(block_iq2_xs) == 74 && sizeof(block_iq2_s) == 82);
static_assert(sizeof(block_iq3_xxs) == 98 && sizeof(block_iq3_s) == 110);
static_assert(sizeof(block_iq1_s) == 50 && sizeof(block_iq1_m) == 56);

}  // namespace hart
