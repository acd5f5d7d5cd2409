// Internal: pieces shared by the K-quant types (Q4_K, Q5_K, Q6_K, with Q8_K activations):
// ggml's rounding, its scale searches, the 6-bit scale/min packing of Q4_K/Q5_K, and the operation
// order of ggml's generic K-quant dot products.
#pragma once

#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/codec.h"

namespace hart::quant {

// Round to nearest, ties to even, for |x| < 2^22: adding 1.5*2^23 leaves the rounded integer in
// the low mantissa bits (ggml's nearest_int).
inline int nearest_int(float x) {
  const float v = x + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

// ggml's make_qx_quants with rmse_type 1: symmetric levels -nmax..nmax-1 for n values (stored in L
// offset by nmax), trying 19 scales around nmax/max and keeping the one with the best weighted
// least-squares fit, the weights being `weights` or else x^2. Returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights = nullptr);

// ggml's make_qkx2_quants: levels 0..nmax with a scale and a non-positive minimum, searched over
// nstep+1 candidate scales (rmin + rdelta*i + nmax)/(max - min) with the least-squares scale/min
// for each, the candidates compared by weighted squared error (Q4_K, Q5_K) or weighted absolute
// error (`abs_error`, Q2_K). Returns the scale; *neg_min = -min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* neg_min, float rmin, float rdelta, int nstep, bool abs_error = false);

// ggml's make_qp_quants: levels 0..nmax for (mostly) non-negative x with a positive scale, the best of 9
// scales around nmax/max by weighted squared error, then up to 5 passes moving single levels where
// that improves the weighted least-squares fit. Returns the fitted scale.
float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* weights);

// Q4_K/Q5_K keep 8 (scale, min) pairs of 6 bits in 12 bytes.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min);

// Parameters of the candidate-scale search for the Q4_K / Q5_K super-block quantizer.
struct ScaleSearch {
  int nmax;
  float rmin, rdelta;
  int nstep;
};

// ggml's Q4_K / Q5_K super-block quantizer: a (scale, min) per 32 weights from make_qkx2_quants,
// both quantized to 6 bits against fp16 super-scales d and dmin, then the 256 levels (0..nmax)
// recomputed with the rounded scales and written to L.
void quantize_scale_min_superblock(const float* x, const ScaleSearch& search, fp16_t* d,
                                   fp16_t* dmin, uint8_t* scales, uint8_t* L);
// The same with 256 importance values (ggml's quantize_row_q4_K_impl / _q5_K_impl): weights
// importance * sqrt(sigma2 + x^2), a finer search (rmin -0.9, rdelta 0.05, 36 steps), and the
// scales and mins quantized by make_qp_quants weighted by each group's total weight.
void quantize_scale_min_superblock_weighted(const float* x, const float* importance, int nmax, fp16_t* d,
                                            fp16_t* dmin, uint8_t* scales, uint8_t* L);

// Q2_K / Q3_K keep 2 bits of each weight: in 128-weight half h, weight 32k + l (k = 0..3) sits in
// bits 2k..2k+1 of qs[32h + l].
inline void unpack_k_crumbs(const uint8_t* qs, int8_t* q) {
  for (int h = 0; h < 2; h++)
    for (int k = 0; k < 4; k++)
      for (int l = 0; l < 32; l++) q[128 * h + 32 * k + l] = int8_t((qs[32 * h + l] >> (2 * k)) & 3);
}

inline void pack_k_crumbs(const uint8_t* L, uint8_t* qs) {
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++) {
      const uint8_t* Lh = L + 128 * h + l;
      qs[32 * h + l] = uint8_t(Lh[0] | (Lh[32] << 2) | (Lh[64] << 4) | (Lh[96] << 6));
    }
}

// The operation order of ggml's generic K-quant x Q8_K dot product, which SIMD kernels are held to:
// within a super-block, integer products scale*w*a are summed in 8 lanes (element index mod 8);
// across super-blocks each lane accumulates lane += d*isum in float, the min correction goes to a
// separate float sum, and the lanes are added to it at the end.
class KQuantDot {
 public:
  // One super-block: 256 weight levels w, activation levels a, an integer scale per 16 elements.
  void add(const int8_t* w, const int8_t* a, const int* scale16, float d);
  void subtract(float min_correction) { rest_ -= min_correction; }
  float result() const;

 private:
  float lanes_[8] = {};
  float rest_ = 0;
};

// sum over the 16-element groups of bsums[g] * mins[g / 2]: the integer part of the min
// correction of Q4_K / Q5_K.
int min_correction(const int16_t* bsums, const uint8_t* mins8);

// Q4_K / Q5_K share everything but how their levels are stored: Levels(block, q) writes the
// 256 levels 0..31 of a super-block in element order.
template <class Block, void (*Levels)(const Block&, int8_t*)>
void dequantize_scale_min(const void* src, float* dst, int64_t n) {
  for_each_block<Block, QK_K>(src, dst, n, [](const Block& b, float* y) {
    int8_t q[QK_K];
    Levels(b, q);
    const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
    for (int j = 0; j < 8; j++) {
      uint8_t sc, m;
      get_scale_min_k4(j, b.scales, &sc, &m);
      const float dj = d * float(sc), mj = dmin * float(m);
      for (int l = 0; l < 32; l++) y[32 * j + l] = dj * float(q[32 * j + l]) - mj;
    }
  });
}

// Scales(w, x, scale16) writes the integer scale of each 16 weights of super-block w and returns
// the float min correction to subtract (dmin*d_x*sum(bsums*mins); 0 for Q6_K).
template <class Block, void (*Levels)(const Block&, int8_t*),
          float (*Scales)(const Block&, const block_q8_K&, int*)>
void vec_dot_k(int64_t n, float* out, const void* w, const void* x) {
  const Block* wb = static_cast<const Block*>(w);
  const block_q8_K* xb = static_cast<const block_q8_K*>(x);
  KQuantDot acc;
  for (int64_t i = 0; i < n / QK_K; i++) {
    int8_t q[QK_K];
    int scale16[16];
    Levels(wb[i], q);
    const float min_correction = Scales(wb[i], xb[i], scale16);
    acc.add(q, xb[i].qs, scale16, fp16_to_f32(wb[i].d) * xb[i].d);
    acc.subtract(min_correction);
  }
  *out = acc.result();
}

// The Scales of Q4_K / Q5_K: 6-bit scale per 32 weights, and the 6-bit mins times Q8_K's bsums.
template <class Block>
float scale_min_scales(const Block& w, const block_q8_K& x, int* scale16) {
  uint8_t mins[8];
  for (int j = 0; j < 8; j++) {
    uint8_t sc;
    get_scale_min_k4(j, w.scales, &sc, &mins[j]);
    scale16[2 * j] = scale16[2 * j + 1] = sc;
  }
  return fp16_to_f32(w.dmin) * x.d * float(min_correction(x.bsums, mins));
}

// Q4_K / Q5_K keep 64 weights per 32 bytes of qs: the first 32 in the low nibbles, the next 32 in
// the high ones.
inline void unpack_k_nibbles(const uint8_t* qs, int8_t* q) {
  for (int c = 0; c < 4; c++) {
    for (int l = 0; l < 32; l++) {
      q[64 * c + l] = int8_t(qs[32 * c + l] & 0xF);
      q[64 * c + 32 + l] = int8_t(qs[32 * c + l] >> 4);
    }
  }
}

inline void pack_k_nibbles(const uint8_t* L, uint8_t* qs) {
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++)
      qs[32 * c + l] = uint8_t((L[64 * c + l] & 0xF) | ((L[64 * c + 32 + l] & 0xF) << 4));
}

}  // namespace hart::quant
