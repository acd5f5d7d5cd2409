// Weight repacking: the CPU backend's copy of MUL_MAT weights in the kernel set's panel layout
// (Kernels::panel). Packed once, on the first graph that multiplies by a weight (the first
// forward pass after load), owned by the backend, freed with it (a reloaded model gets a new
// backend), and counted in repacked_bytes(). A weight without a layout keeps the row-major path:
// a type the set has no panel kernel for, fewer rows than one panel, a 4-D or non-contiguous
// weight. A 3-D weight (a stack of matrices: MoE experts, batched MUL_MAT) is packed matrix by
// matrix, matrix e's panels after those of e - 1, when its row count is a multiple of the panel
// height; a 2-D weight whose row count is not (a vocabulary of 49155 tokens) has its whole panels
// packed and its last rows read as stored. Copies are keyed by the weight's data
// pointer: kFlagWeight bytes must not change while the backend lives. A packed weight of a GGUF
// file gives the pages of its stored rows back (gguf::File::release_pages: later reads, such as
// GET_ROWS of a tied embedding, take them from the file again), and so does a table only GET_ROWS
// reads, which keeps the rows it has read: the weights are resident once, as with a mapped file.
// HART_REPACK=0 turns packing and releasing off.
//
// Panel layout of the 32-element block types (Q4_0, Q5_0, Q8_0), `rows` = R rows per panel:
//   for each block column b: fp16 d[R], (Q5_0) R x qh_r[0 .. 3], then for each 4-byte chunk j of
//   qs: R x qs_r[4j .. 4j+3]
// so chunk j is one R x 4-byte vector whose 32-bit lane r belongs to row r. For Q4_0 the low
// nibbles of chunk j are elements 4j..4j+3 and the high ones 16+4j..16+4j+3 (qs as stored,
// values 0..15: the kernels subtract 8 x the activation block's sum once per block; Q5_0 adds
// bit e of qh_r as 16 to element e and subtracts 16 x the sum). The "_u8"
// Q8_0 variant stores q + 128 (q ^ 0x80) for u8 x s8 dot instructions (vpdpbusd).
//
// Panel layout of Q4_K (256-element super-blocks), same scheme: per super-block column fp16 d[R],
// fp16 dmin[R], the 12 packed 6-bit scale/min bytes as 3 chunks of R x 4 bytes (lane r of chunk
// i = bytes 4i .. 4i+3 of row r's scales, unpacked by the kernel for all R rows at once), then
// the 32 qs chunks of R x 4 bytes: chunk 8g + t holds elements 64g + 4t .. +3 (low nibbles) and
// 64g + 32 + 4t .. +3 (high nibbles).
//
// The x86 layouts of Q2_K, Q3_K, IQ4_XS and IQ4_NL are the same scheme over their blocks' bytes:
// the fp16 fields as R-word vectors (Q2_K: d, dmin; Q3_K, IQ4_NL: d; IQ4_XS: d, then scales_h as
// a second 2-byte field), then every following 4-byte chunk of the block as R x 4 bytes. Q2_K and
// Q3_K store their d (and dmin) last, so the packer moves those to the front and keeps the rest
// in stored order (Q2_K: scales[16], qs[64]; Q3_K: hmask[32], qs[64], scales[12]); IQ4_XS
// (scales_l[4], qs[128]) and IQ4_NL (qs[16]) are in stored order already. Stored order is what
// the kernels want: qs chunk 8h + t of Q2_K / Q3_K holds in bits 2k, 2k + 1 of its byte i the low
// bits of element 128h + 32k + 4t + i, hmask chunk t holds in bit j of byte i the high bit of
// element 32j + 4t + i, and the IQ4 qs chunks hold table indices as Q4_0 holds its nibbles.
//
// The "_bytes" variants (RVV) interleave single bytes instead of 4-byte chunks: after the R-word
// fp16 fields, byte j of every row's remaining bytes is R consecutive bytes [j * R + r], so byte j
// of all R rows is one e8 vector (Q8_0: element j; Q4_0: elements j and 16 + j in its nibbles,
// stored ^ 0x88 so that each nibble read as a signed 4-bit number is its level - 8; Q4_K: scale
// bytes 0..11, then qs byte 32g + l holds elements 64g + l and 64g + 32 + l).
//
// IQ4_NL "_bytes" (RVV): the Q4_0 "_bytes" layout without the ^ 0x88: byte j of a row holds the
// table indices (kIq4Levels) of elements j (low nibble) and 16 + j (high), as stored.
//
// Q5_0 "_masks" (RVV; R a multiple of 8): the "_bytes" layout with the 4R interleaved qh bytes
// replaced by one R-bit row mask per element e (R / 8 bytes each, e = 0 .. 31): bit r set where
// row r's fifth bit of element e is clear (a vector mask the kernel loads with vlm).
//
// Q5_K "_masks" (RVV; R a multiple of 8): the "_bytes" layout (d[R], dmin[R], the 12 scale bytes,
// the qh bytes, the 128 qs bytes as Q4_K's) with the 32 R interleaved qh bytes replaced by one
// R-bit row mask per element e (e = 0 .. 255, R / 8 bytes each): bit r set where row r's fifth
// bit of element e is set.
//
// Q6_K (x86) and Q6_K "_bytes" (RVV): the block re-cut as fp16 d, the 16 int8 group scales, then
// 12 level bytes per 16-weight group g, byte 12g + 4t + c (t < 3, c < 4) = v_{16g+4t+c} << 2 | bits
// 2t, 2t + 1 of v_{16g+12+c} (the same 192 bytes' bits, a group's levels together and in order);
// x86 takes v = the 6-bit level (0..63) and 4-byte chunks: d[R], the scales as 4 chunks, then 3
// chunks per group; RVV takes v = level ^ 32 (the 6-bit two's complement of level - 32, so that
// every level byte is one vsra away from a signed level) and single bytes [j * R + r].
//
// Q2_K, Q3_K, IQ4_XS "_bytes" (RVV): per super-block column the fp16 fields moved to the front
// (Q2_K: d[R], dmin[R]; Q3_K, IQ4_XS: d[R]), then every remaining byte j of the rows at [j * R + r]:
// the scale bytes as stored (Q2_K: scales[16]; Q3_K: scales[12]; IQ4_XS: scales_h as 2 bytes,
// scales_l[4]), then the level bytes re-cut so that elements 8m .. 8m + 7 come from a few
// consecutive bytes in order: Q2_K byte j = the 2-bit levels of elements 4j .. 4j + 3 from the low
// bits up; Q3_K 3 bytes per 8 elements of u_i = level_i + 4 (0..7), b0 = u0 | u1 << 3 |
// (u6 & 3) << 6, b1 = u2 | u3 << 3 | (u7 & 3) << 6, b2 = u4 | u5 << 3 | (u6 >> 2) << 6 |
// (u7 >> 2) << 7; IQ4_XS byte j = the table indices of elements 2j (low nibble) and 2j + 1.
//
// Panel layout of the 2-byte float types (F16, BF16): element k of panel row r at [k * R + r],
// so column k is one R-element vector whose lane r belongs to row r (times the scalar x[k]).
// The "_pairs" variant (BF16 for vdpbf16ps) interleaves column pairs: elements 2p and 2p + 1 of
// row r at [(p * R + r) * 2] and [(p * R + r) * 2 + 1], so each 32-bit lane r holds a pair of
// row r that one dot-product step multiplies by the activation's pair x[2p], x[2p + 1]; an odd
// last column stays single at [(n - 1) * R + r].
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "backend/cpu/kernels.h"
#include "backend/cpu/threadpool.h"
#include "graph/graph.h"

namespace hart::cpu {

// Panel heights a set may use: mul_mat's W tiles are multiples of every one of them.
constexpr int kMaxPanelRows = 32;

// The packers of the layout above (PackFn), one per block type.
void pack_panel_q4_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q5_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q8_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q8_0_u8(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q4_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q2_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q3_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q6_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_iq4_xs(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_iq4_nl(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q4_0_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q8_0_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q4_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_iq4_nl_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q5_0_masks(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q5_K_masks(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q6_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q2_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_q3_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_iq4_xs_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
// The 2-byte float layout above (F16, BF16: the bits are moved, not converted).
void pack_panel_16bit(int64_t n, int rows, const void* w, size_t w_stride, void* panel);
void pack_panel_16bit_pairs(int64_t n, int rows, const void* w, size_t w_stride, void* panel);

struct PackedWeight {
  const PanelKernel* kernel;  // the set's entry it was packed for
  const std::byte* data;      // n_panels panels, panel_stride bytes apart
  size_t panel_stride;
};

class WeightPacks {
 public:
  WeightPacks() = default;
  WeightPacks(const WeightPacks&) = delete;
  WeightPacks& operator=(const WeightPacks&) = delete;
  ~WeightPacks();

  // Packs each weight that g multiplies by and that k has a layout for, unless already packed for
  // k; the panels are shared out over the pool's threads.
  void prepare(const Graph& g, const Kernels& k, ThreadPool& pool);
  // The packed copy of weight w for k's layout, or nullptr (use w's rows).
  const PackedWeight* find(const Tensor& w, const Kernels& k) const;
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    PackedWeight packed;
    Type type;
    int64_t ne[kMaxDims];
    std::unique_ptr<std::byte, void (*)(void*)> memory;
    size_t size;
  };
  bool matches(const Entry& e, const Tensor& w, const Kernels& k) const;

  std::unordered_map<const void*, Entry> packs_;  // by the weight's data pointer
  std::unordered_set<const void*> unpacked_;       // left as stored for want of memory: not tried again
  std::unordered_set<const void*> released_;       // weights whose memory went back to their file
  size_t bytes_ = 0;
};

// Bytes of packed weights alive in this process (every backend's), for memory reports.
size_t repacked_bytes();
// HART_REPACK=0 turns packing off (every weight takes the row-major path), to compare the two.
bool repack_enabled();

}  // namespace hart::cpu
