/* The block types the kernels read (dequantized on the fly; ggml's layouts, values bit for bit as
 * ggml's dequantization). Every block type is read as groups of integer levels sharing a scale and
 * an offset, element j of a group being q[j] * scale - offset: groups of 32 but for Q6_K's 16.
 *   Q8_0   {f16 d; int8 q[32]}                              q * d
 *   Q4_0   {f16 d; uint8 q[16]}                             (nibble - 8) * d
 *   Q4_1   {f16 d, m; uint8 q[16]}                          nibble * d + m
 *   Q5_0   {f16 d; uint8 qh[4]; uint8 q[16]}                (nibble | bit << 4) - 16) * d
 *   Q5_1   {f16 d, m; uint8 qh[4]; uint8 q[16]}             (nibble | bit << 4) * d + m
 *   IQ4_NL {f16 d; uint8 q[16]}                             kvalues[nibble] * d
 *     (element j < 16 in the low nibble of q[j], j >= 16 in the high nibble of q[j - 16]; the
 *     fifth bit of element j is bit j of qh)
 *   Q4_K   {f16 d, dmin; uint8 scales[12]; uint8 q[128]}    256 elements, 8 groups of 32: group g
 *     holds 4-bit levels (bytes 32 (g / 2) .. + 31 of q, low nibbles for even g, high for odd) with
 *     a 6-bit scale s_g and min m_g packed in scales: level * (d * s_g) - dmin * m_g
 *   Q5_K   {f16 d, dmin; uint8 scales[12]; uint8 qh[32]; uint8 q[128]}  Q4_K's levels with a fifth
 *     bit, element l of group g having bit g of qh[l]
 *   Q6_K   {uint8 ql[128]; uint8 qh[64]; int8 scales[16]; f16 d}  256 elements in two halves of
 *     128; element l + 32 k (k = 0..3) of a half: low 4 bits from ql[l + 32 (k % 2)] (low nibble
 *     for k < 2), high 2 bits from qh[l] >> 2 k, level - 32, times d * scales[l / 16 + 2 k]. */
#ifndef ET_BLOCKS_H
#define ET_BLOCKS_H

#include "et_math.h"
#include "et_params.h"

#define ET_QK 32
#define ET_QK_K 256

static inline float et_load_f16(const uint8_t* p) { return et_f16_to_f32((uint16_t)(p[0] | (p[1] << 8))); }

/* Elements and bytes of one block; 0 for a type that is not a block type. */
static inline int64_t et_block_elems(int32_t type) {
  switch (type) {
    case ET_TYPE_Q4_0: case ET_TYPE_Q4_1: case ET_TYPE_Q5_0: case ET_TYPE_Q5_1: case ET_TYPE_Q8_0:
    case ET_TYPE_IQ4_NL: return ET_QK;
    case ET_TYPE_Q4_K: case ET_TYPE_Q5_K: case ET_TYPE_Q6_K: return ET_QK_K;
    default: return 0;
  }
}

static inline int64_t et_block_bytes(int32_t type) {
  switch (type) {
    case ET_TYPE_Q4_0: case ET_TYPE_IQ4_NL: return 18;
    case ET_TYPE_Q4_1: return 20;
    case ET_TYPE_Q5_0: return 22;
    case ET_TYPE_Q5_1: return 24;
    case ET_TYPE_Q8_0: return 34;
    case ET_TYPE_Q4_K: return 144;
    case ET_TYPE_Q5_K: return 176;
    case ET_TYPE_Q6_K: return 210;
    default: return 0;
  }
}

static inline int et_is_block_type(int32_t type) { return et_block_elems(type) != 0; }

/* Elements of a group of levels sharing one scale. */
static inline int64_t et_group_elems(int32_t type) { return type == ET_TYPE_Q6_K ? 16 : ET_QK; }

/* Q4_K's and Q5_K's 6-bit scale and min of group j (0..7) from the 12 packed bytes: groups 0-3 in
 * the low 6 bits of bytes j and j + 4; groups 4-7 in the nibbles of byte j + 4, their top 2 bits
 * in the top bits of bytes j - 4 (scale) and j (min). */
static inline void et_k_scale_min(const uint8_t* s, int j, int32_t* scale, int32_t* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

static const int8_t et_iq4_nl_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

/* A 256-element super-block's group g: Q4_K, Q5_K (8 groups of 32) or Q6_K (16 groups of 16). */
static inline float et_k_group_levels(const uint8_t* sb, int32_t type, int j, int32_t* q, float* offset) {
  if (type == ET_TYPE_Q6_K) {
    const int half = j / 8, k = (j % 8) / 2, l0 = 16 * (j % 2);
    const uint8_t* ql = sb + 64 * half + 32 * (k % 2);
    const uint8_t* qh = sb + 128 + 32 * half;
    for (int l = l0; l < l0 + 16; l++) {
      const int low = k < 2 ? ql[l] & 0x0f : ql[l] >> 4;
      q[l - l0] = (low | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
    }
    *offset = 0.0f;
    return et_load_f16(sb + 208) * (float)(int8_t)sb[192 + 8 * half + l0 / 16 + 2 * k];
  }
  const int high = type == ET_TYPE_Q5_K;
  const uint8_t* qs = sb + (high ? 48 : 16) + 32 * (j / 2);
  const int shift = 4 * (j % 2);
  for (int l = 0; l < ET_QK; l++) q[l] = ((qs[l] >> shift) & 0x0f) | (high ? ((sb[16 + l] >> j) & 1) << 4 : 0);
  int32_t sc, m;
  et_k_scale_min(sb + 4, j, &sc, &m);
  *offset = et_load_f16(sb + 2) * (float)m;
  return et_load_f16(sb) * (float)sc;
}

/* The integer levels of group g (elements g * et_group_elems(type) onwards) of a row of a block
 * type, its scale (returned) and its offset (*offset). */
static inline float et_group_levels(const uint8_t* row, int32_t type, int64_t g, int32_t* q, float* offset) {
  const int64_t per_block = et_block_elems(type) / et_group_elems(type);
  const uint8_t* block = row + g / per_block * et_block_bytes(type);
  if (per_block > 1) return et_k_group_levels(block, type, (int)(g % per_block), q, offset);
  *offset = 0.0f;
  const float d = et_load_f16(block);
  if (type == ET_TYPE_Q8_0) {
    for (int j = 0; j < ET_QK; j++) q[j] = (int8_t)block[2 + j];
    return d;
  }
  const int has_min = type == ET_TYPE_Q4_1 || type == ET_TYPE_Q5_1;
  const int has_high = type == ET_TYPE_Q5_0 || type == ET_TYPE_Q5_1;
  const uint8_t* qh = block + (has_min ? 4 : 2);
  const uint8_t* qs = qh + (has_high ? 4 : 0);
  const uint32_t high =
      has_high ? (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24 : 0;
  const int32_t bias = type == ET_TYPE_Q4_0 ? 8 : type == ET_TYPE_Q5_0 ? 16 : 0;
  for (int j = 0; j < ET_QK; j++) {
    const int32_t nibble = j < ET_QK / 2 ? qs[j] & 0x0f : qs[j - ET_QK / 2] >> 4;
    const int32_t level = nibble | (int32_t)((high >> j) & 1) << 4;
    q[j] = type == ET_TYPE_IQ4_NL ? et_iq4_nl_levels[nibble] : level - bias;
  }
  /* ggml adds the min: q d + m, the same float as q d - (-m). */
  if (has_min) *offset = -et_load_f16(block + 2);
  return d;
}

#endif
