// Internal: the machinery shared by the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL, MXFP4). Each type only says how to read its integer levels; dequantization (level * d [+ m])
// and the integer dot product against Q8_0 / Q8_1 are the same mechanism for all of them.
#pragma once

#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/codec.h"

namespace hart::quant {

constexpr int QK32 = 32;

// Element j of a block sits in the low nibble of qs[j] for j < 16, the high nibble of qs[j - 16]
// otherwise.
inline void unpack_nibbles(const uint8_t* qs, int8_t* q, int offset) {
  for (int j = 0; j < 16; j++) {
    q[j] = int8_t((qs[j] & 0x0F) + offset);
    q[j + 16] = int8_t((qs[j] >> 4) + offset);
  }
}

// The same packing with each nibble indexing a table of 16 levels (IQ4_NL, IQ4_XS, MXFP4).
inline void lookup_nibbles(const uint8_t* qs, const int8_t* table, int8_t* q) {
  for (int j = 0; j < 16; j++) {
    q[j] = table[qs[j] & 0x0F];
    q[j + 16] = table[qs[j] >> 4];
  }
}

inline void pack_nibbles(const uint8_t* levels, uint8_t* qs) {
  for (int j = 0; j < 16; j++) qs[j] = uint8_t((levels[j] & 0x0F) | ((levels[j + 16] & 0x0F) << 4));
}

// Q5 types keep the fifth bit of element j in bit j of a little-endian uint32.
inline uint32_t fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  return bits;
}

inline void add_fifth_bits(const uint8_t* qh, int8_t* q) {
  const uint32_t bits = fifth_bits(qh);
  for (int j = 0; j < QK32; j++) q[j] = int8_t(q[j] + int((bits >> j) & 1) * 16);
}

inline void pack_fifth_bits(const uint8_t* levels, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < QK32; j++) bits |= uint32_t((levels[j] >> 4) & 1) << j;
  std::memcpy(qh, &bits, 4);
}

// A weight block's scale: its fp16 d, or MXFP4's E8M0 exponent (halved: its levels are doubled).
template <class Block>
float block_scale(const Block& b) {
  if constexpr (requires { b.e; }) return e8m0_to_f32_half(b.e);
  else return fp16_to_f32(b.d);
}

template <class Block>
concept HasMin = requires(const Block& b) { b.m; };

// Levels(block, q) writes the block's 32 signed integer levels.
template <class Block, void (*Levels)(const Block&, int8_t*)>
void dequantize_levels(const void* src, float* dst, int64_t n) {
  for_each_block<Block, QK32>(src, dst, n, [](const Block& b, float* y) {
    int8_t q[QK32];
    Levels(b, q);
    const float d = block_scale(b);
    if constexpr (HasMin<Block>) {
      const float m = fp16_to_f32(b.m);
      for (int j = 0; j < QK32; j++) y[j] = float(q[j]) * d + m;
    } else {
      for (int j = 0; j < QK32; j++) y[j] = float(q[j]) * d;
    }
  });
}

// How one block's integer sum becomes a float, in ggml's generic operation order:
// Q5_0 / Q8_0 / IQ4_NL / MXFP4: (dw*dx)*sumi; Q4_1 / Q5_1: (dw*dx)*sumi + mw*sx; Q4_0 (sumi*dw)*dx.
template <class Block, class Act>
float combine_block(const Block& w, const Act& x, int sumi) {
  const float dw = block_scale(w), dx = fp16_to_f32(x.d);
  if constexpr (HasMin<Block>) return (dw * dx) * float(sumi) + fp16_to_f32(w.m) * fp16_to_f32(x.s);
  else return (dw * dx) * float(sumi);
}

// out = sum over blocks of Combine(w, x, sum_j level_j * x.qs_j), blocks in order.
template <class Block, class Act, void (*Levels)(const Block&, int8_t*),
          float (*Combine)(const Block&, const Act&, int) = combine_block<Block, Act>>
void vec_dot_levels(int64_t n, float* out, const void* w, const void* x) {
  const Block* wb = static_cast<const Block*>(w);
  const Act* xb = static_cast<const Act*>(x);
  float sum = 0;
  for (int64_t i = 0; i < n / QK32; i++) {
    int8_t q[QK32];
    Levels(wb[i], q);
    int sumi = 0;
    for (int j = 0; j < QK32; j++) sumi += int(q[j]) * int(xb[i].qs[j]);
    sum += Combine(wb[i], xb[i], sumi);
  }
  *out = sum;
}

// ggml's Q4_0 / Q5_0 quantizers: d = (the signed value of largest magnitude) / -half, so that
// value lands exactly on level 0 (-half); the others round to nearest, capped at 2*half-1.
// Writes unsigned levels 0..2*half-1 and returns d.
inline float symmetric_levels(const float* x, int half, uint8_t* levels) {
  const float d = abs_max(x, QK32).max / float(-half);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK32; j++) {
    const int l = int8_t(x[j] * id + (float(half) + 0.5f));
    levels[j] = uint8_t(l < 2 * half - 1 ? l : 2 * half - 1);
  }
  return d;
}

// ggml's Q4_1 / Q5_1 quantizers: levels 0..nmax spread evenly from the block's min to its max.
// Writes the levels, returns d and sets *min.
inline float affine_levels(const float* x, int nmax, uint8_t* levels, float* min) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < QK32; j++) {
    if (x[j] < lo) lo = x[j];
    if (x[j] > hi) hi = x[j];
  }
  const float d = (hi - lo) / float(nmax);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < QK32; j++) {
    const int l = int((x[j] - lo) * id + 0.5f);
    levels[j] = uint8_t(l < nmax ? l : nmax);
  }
  *min = lo;
  return d;
}

}  // namespace hart::quant
