// Internal: the IQ types' quantizers (ggml's algorithms), for iq_codec.cpp's codecs. IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S share one search (iq_search.cpp): per block of 16 or 32 weights the
// signs set aside (folded to an even count where the type stores 7 of 8), then candidate scales
// whose rounded levels are projected onto the grid, the best weighted least-squares fit kept,
// and 4-bit block scales under one fp16 super-block scale.
#pragma once

#include <cstdint>

#include "quant/iq_grid_search.h"

namespace hart::quant {

using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);
using QuantizeWeightedFn = void (*)(const float* src, void* dst, int64_t n, const float* importance);

// Which groups get projected again at the best candidate's scale.
enum class Reproject {
  All,          // every group (IQ2_XXS)
  AllIfAnyOff,  // every group when one was off the grid (IQ3_S)
  OffGrid,      // the groups that were off the grid (IQ2_XS, IQ3_XXS)
};

// The parameters of one type's search.
struct IqSearch {
  const IqGridSearch& (*grid)();
  int block;          // weights per block scale: 32 or 16
  int kmax;           // levels 0..kmax-1 (odd integers 1..2kmax-1)
  int steps;          // candidate inverse scales (2kmax-1 + is*step) / denominator, |is| <= steps
  float step;
  bool qp_start;      // denominator kmax * make_qp_quants' scale (IQ2_XXS), else the block's max
  Reproject reproject; // (IQ2_S as IQ2_XS)
  bool even_signs;    // 7 stored sign bits per octet, the 8th implied (else all 8 stored)
  float eps;          // blocks whose largest |x| is below this are zero
  float sigma_factor; // importance weights are qw * sqrt(sigma2 + x^2), sigma2 = sigma_factor * mean(x^2)
  float plain_sigma;  // without importance: plain_sigma * sigma2 + x^2 (IQ2_S's 1/4, else 0)
  float d_fudge;      // the stored super-block scale is d * d_fudge (IQ3_XXS's 1.0125)
};

// The codes of one 256-weight super-block, for the type to pack.
struct IqCodes {
  float d = 0;              // fp32 super-block scale to store
  uint16_t index[64] = {};  // grid entry per group of dims weights
  uint8_t signs[32] = {};   // sign bits per octet (7 when the 8th makes the count even)
  uint8_t scale[16] = {};   // 4-bit scale per block: block scale = d * (2 s + 1)
};

// importance: 256 per-column weights, or nullptr (then x^2).
void search_superblock(const IqSearch& s, const float* x, const float* importance, IqCodes* codes);

}  // namespace hart::quant

namespace hart::quant {

// The quantizers of iq_pack.cpp and iq1_quantize.cpp (n a multiple of 256; importance: n weights
// or nullptr).
void quantize_iq2_xxs(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq2_xs(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq2_s(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq3_xxs(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq3_s(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq1_s(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq1_m(const float* src, void* dst, int64_t n, const float* importance);

}  // namespace hart::quant
