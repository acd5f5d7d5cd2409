// The search parameters of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S (ggml's), their grids' search structures,
// and how each type packs iq_search.cpp's codes.
#include <cstring>

#include "quant/blocks.h"
#include "quant/iq_grids.h"
#include "quant/iq_quantize.h"

namespace hart::quant {
namespace {

// A grid's search structure, built on first use (the neighbour lists take some milliseconds) and
// then shared by all threads. Entry must be uint64_t (8 weights) or uint32_t (4 weights).
template <class Entry, int N, const Entry (&Grid)[N], int Distances>
const IqGridSearch& grid() {
  static const IqGridSearch g(Grid, N, int(sizeof(Entry)), int(sizeof(Entry)), Distances);
  return g;
}
constexpr auto grid_iq2_xxs = &grid<uint64_t, 256, kIq2xxsGrid, 2>;
constexpr auto grid_iq2_xs = &grid<uint64_t, 512, kIq2xsGrid, 2>;
constexpr auto grid_iq2_s = &grid<uint64_t, 1024, kIq2sGrid, 1>;
constexpr auto grid_iq3_xxs = &grid<uint32_t, 256, kIq3xxsGrid, 2>;
constexpr auto grid_iq3_s = &grid<uint32_t, 512, kIq3sGrid, 3>;

constexpr IqSearch kIq2xxs{.grid = grid_iq2_xxs, .block = 32, .kmax = 3, .steps = 6, .step = 0.1f, .qp_start = true,
                           .reproject = Reproject::All, .even_signs = true, .eps = 1e-15f, .sigma_factor = 1,
                           .plain_sigma = 0, .d_fudge = 1};
constexpr IqSearch kIq2xs{.grid = grid_iq2_xs, .block = 16, .kmax = 3, .steps = 9, .step = 0.1f, .qp_start = false,
                          .reproject = Reproject::OffGrid, .even_signs = true, .eps = 1e-15f, .sigma_factor = 1,
                          .plain_sigma = 0, .d_fudge = 1};
constexpr IqSearch kIq2s{.grid = grid_iq2_s, .block = 16, .kmax = 3, .steps = 9, .step = 0.1f, .qp_start = false,
                         .reproject = Reproject::OffGrid, .even_signs = false, .eps = 1e-8f, .sigma_factor = 2,
                         .plain_sigma = 0.25f, .d_fudge = 0.9875f};
constexpr IqSearch kIq3xxs{.grid = grid_iq3_xxs, .block = 32, .kmax = 8, .steps = 15, .step = 0.2f, .qp_start = false,
                           .reproject = Reproject::OffGrid, .even_signs = true, .eps = 1e-8f, .sigma_factor = 2,
                           .plain_sigma = 0, .d_fudge = 1.0125f};
// IQ3_S skips only blocks that are exactly zero (the smallest denormal is the first non-zero).
constexpr IqSearch kIq3s{.grid = grid_iq3_s, .block = 32, .kmax = 8, .steps = 9, .step = 0.2f, .qp_start = false,
                         .reproject = Reproject::AllIfAnyOff, .even_signs = false, .eps = 1.4e-45f,
                         .sigma_factor = 2, .plain_sigma = 0, .d_fudge = 1.033f};

// Per 32 weights a word of 8-bit grid indices (`per_word` of them per word) and a word of four
// 7-bit signs with the 4-bit scale on top: IQ2_XXS interleaves the two words, IQ3_XXS keeps all
// index bytes first.
void put_sign_scale_word(const IqCodes& c, int ib, uint8_t* at) {
  uint32_t w = uint32_t(c.scale[ib]) << 28;
  for (int k = 0; k < 4; k++) w |= uint32_t(c.signs[4 * ib + k]) << (7 * k);
  std::memcpy(at, &w, 4);
}

void pack_iq2_xxs(const IqCodes& c, block_iq2_xxs& b) {
  b.d = f32_to_fp16(c.d);
  auto* qs = reinterpret_cast<uint8_t*>(b.qs);
  for (int ib = 0; ib < 8; ib++) {
    for (int k = 0; k < 4; k++) qs[8 * ib + k] = uint8_t(c.index[4 * ib + k]);
    put_sign_scale_word(c, ib, qs + 8 * ib + 4);
  }
}

void pack_iq3_xxs(const IqCodes& c, block_iq3_xxs& b) {
  b.d = f32_to_fp16(c.d);
  for (int g = 0; g < 64; g++) b.qs[g] = uint8_t(c.index[g]);
  for (int ib = 0; ib < 8; ib++) put_sign_scale_word(c, ib, b.qs + 64 + 4 * ib);
}

// IQ2_XS: a 16-bit word per octet (9-bit index, 7 sign bits), a nibble of scale per 16 weights.
void pack_iq2_xs(const IqCodes& c, block_iq2_xs& b) {
  b.d = f32_to_fp16(c.d);
  for (int o = 0; o < 32; o++) b.qs[o] = uint16_t(c.index[o] | c.signs[o] << 9);
  for (int i = 0; i < 8; i++) b.scales[i] = uint8_t(c.scale[2 * i] | c.scale[2 * i + 1] << 4);
}

// IQ2_S: 10-bit indices per octet (8 bits in qs, 2 in qh), 8 stored sign bits per octet after
// them, a nibble of scale per 16 weights.
void pack_iq2_s(const IqCodes& c, block_iq2_s& b) {
  std::memset(&b, 0, sizeof(b));
  b.d = f32_to_fp16(c.d);
  for (int o = 0; o < 32; o++) {
    b.qs[o] = uint8_t(c.index[o] & 255);
    b.qh[o / 4] = uint8_t(b.qh[o / 4] | (c.index[o] >> 8) << (2 * (o % 4)));
    b.qs[32 + o] = c.signs[o];
  }
  for (int i = 0; i < 8; i++) b.scales[i] = uint8_t(c.scale[2 * i] | c.scale[2 * i + 1] << 4);
}

// IQ3_S: 9-bit indices per 4 weights (8 bits in qs, the 9th in qh), 8 stored sign bits per octet,
// a nibble of scale per 32 weights.
void pack_iq3_s(const IqCodes& c, block_iq3_s& b) {
  std::memset(&b, 0, sizeof(b));
  b.d = f32_to_fp16(c.d);
  for (int g = 0; g < 64; g++) {
    b.qs[g] = uint8_t(c.index[g] & 255);
    b.qh[g / 8] = uint8_t(b.qh[g / 8] | (c.index[g] >> 8) << (g % 8));
  }
  std::memcpy(b.signs, c.signs, sizeof(b.signs));
  for (int i = 0; i < 4; i++) b.scales[i] = uint8_t(c.scale[2 * i] | c.scale[2 * i + 1] << 4);
}

template <class Block, const IqSearch& S, void (*Pack)(const IqCodes&, Block&)>
void quantize_superblocks(const float* src, void* dst, int64_t n, const float* importance) {
  auto* b = static_cast<Block*>(dst);
  IqCodes codes;
  for (int64_t i = 0; i < n / 256; i++) {
    search_superblock(S, src + 256 * i, importance ? importance + 256 * i : nullptr, &codes);
    Pack(codes, b[i]);
  }
}

}  // namespace

void quantize_iq2_xxs(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq2_xxs, kIq2xxs, pack_iq2_xxs>(src, dst, n, importance);
}
void quantize_iq2_xs(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq2_xs, kIq2xs, pack_iq2_xs>(src, dst, n, importance);
}
void quantize_iq2_s(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq2_s, kIq2s, pack_iq2_s>(src, dst, n, importance);
}
void quantize_iq3_xxs(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq3_xxs, kIq3xxs, pack_iq3_xxs>(src, dst, n, importance);
}
void quantize_iq3_s(const float* src, void* dst, int64_t n, const float* importance) {
  quantize_superblocks<block_iq3_s, kIq3s, pack_iq3_s>(src, dst, n, importance);
}

}  // namespace hart::quant
