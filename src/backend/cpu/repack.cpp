#include "backend/cpu/repack.h"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_set>

#include "common/memory_budget.h"
#include "gguf/gguf.h"
#include "quant/blocks.h"

namespace hart::cpu {
namespace {

std::atomic<size_t> g_repacked{0};

// A block's bytes in the order a panel layout wants them (its fp16 words first), when that is not
// the stored order.
template <class Block>
using RecutFn = void (*)(const Block& b, uint8_t* out);

// The layouts of repack.h: a block (kElems elements) is kHalves 2-byte words (fp16 scales) then
// kChunk-byte chunks (every byte ^ kXor); per block column, word 0 of the R rows, word 1 of the R
// rows, ..., then chunk 0 of the R rows, chunk 1, ... The block is read as stored, or as kRecut
// writes it.
template <class Block, int64_t kElems, size_t kHalves, size_t kChunk, uint8_t kXor = 0,
          RecutFn<Block> kRecut = nullptr>
void pack_interleaved(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  constexpr size_t kChunks = (sizeof(Block) - 2 * kHalves) / kChunk;
  static_assert(2 * kHalves + kChunk * kChunks == sizeof(Block));
  const size_t R = size_t(rows);
  auto* out = static_cast<uint8_t*>(panel);
  [[maybe_unused]] uint8_t recut[sizeof(Block)];
  for (int64_t b = 0; b < n / kElems; b++) {
    for (size_t r = 0; r < R; r++) {
      const Block& block = reinterpret_cast<const Block*>(static_cast<const char*>(w) + r * w_stride)[b];
      const auto* blk = reinterpret_cast<const uint8_t*>(&block);
      if constexpr (kRecut != nullptr) {
        kRecut(block, recut);
        blk = recut;
      }
      for (size_t h = 0; h < kHalves; h++) std::memcpy(out + 2 * (h * R + r), blk + 2 * h, 2);
      const uint8_t* in = blk + 2 * kHalves;
      uint8_t* chunks = out + 2 * kHalves * R;
      for (size_t j = 0; j < kChunks; j++)
        for (size_t i = 0; i < kChunk; i++) chunks[kChunk * (j * R + r) + i] = in[kChunk * j + i] ^ kXor;
    }
    out += sizeof(Block) * R;
  }
}

// A plain weight matrix, or a stack of them (MoE experts), that a panel layout can hold (see the
// list in repack.h). A stack's matrices are packed one after another: no panel spans two.
bool packable(const Tensor& w, const PanelKernel& pk) {
  return (w.flags & kFlagWeight) && w.op == Op::NONE && !w.is_view() && w.data && pk.rows > 0 && pk.pack &&
         pk.gemm && kMaxPanelRows % pk.rows == 0 && w.ne[3] == 1 && w.is_contiguous() &&
         (w.ne[2] == 1 ? w.ne[1] >= pk.rows : w.ne[1] % pk.rows == 0);
}

}  // namespace

void pack_panel_q4_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q4_0, QK4_0, 1, 4>(n, rows, w, w_stride, panel);
}
void pack_panel_q5_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q5_0, QK5_0, 1, 4>(n, rows, w, w_stride, panel);
}
void pack_panel_q8_0(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q8_0, QK8_0, 1, 4>(n, rows, w, w_stride, panel);
}
void pack_panel_q8_0_u8(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q8_0, QK8_0, 1, 4, 0x80>(n, rows, w, w_stride, panel);
}
void pack_panel_q4_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q4_K, QK_K, 2, 4>(n, rows, w, w_stride, panel);
}
void pack_panel_q4_0_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q4_0, QK4_0, 1, 1, 0x88>(n, rows, w, w_stride, panel);
}
void pack_panel_q8_0_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q8_0, QK8_0, 1, 1>(n, rows, w, w_stride, panel);
}
void pack_panel_iq4_nl_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_iq4_nl, QK4_NL, 1, 1>(n, rows, w, w_stride, panel);
}

namespace {

// The "_masks" layouts of a "_bytes" panel (pack_interleaved with 1-byte chunks) whose blocks hold
// a fifth bit per element in their qh bytes, kHalves fp16 words and kBefore bytes before them:
// those R interleaved qh bytes per row become one R-bit row mask per element, bit r of element
// e's mask (at [e * R / 8 + r / 8]) set where set(row r's block, e) is true. The masks take the
// same bytes as the qh bytes did.
template <class Block, int64_t kElems, size_t kHalves, size_t kBefore, class Set>
void pack_row_masks(int64_t n, int rows, const void* w, size_t w_stride, void* panel, Set set) {
  pack_interleaved<Block, kElems, kHalves, 1>(n, rows, w, w_stride, panel);
  static_assert(sizeof(Block::qh) * 8 == kElems);
  const size_t R = size_t(rows), mask_bytes = R / 8;
  auto* column = static_cast<uint8_t*>(panel);
  for (int64_t b = 0; b < n / kElems; b++, column += sizeof(Block) * R) {
    uint8_t* masks = column + (2 * kHalves + kBefore) * R;
    std::memset(masks, 0, kElems * mask_bytes);
    for (size_t r = 0; r < R; r++) {
      const Block& blk = reinterpret_cast<const Block*>(static_cast<const char*>(w) + r * w_stride)[b];
      for (int e = 0; e < kElems; e++)
        if (set(blk, e)) masks[size_t(e) * mask_bytes + r / 8] |= uint8_t(1u << (r % 8));
    }
  }
}

}  // namespace

void pack_panel_q5_0_masks(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  // Set where the fifth bit (bit e of qh) is clear: the kernel subtracts 16 there.
  pack_row_masks<block_q5_0, QK5_0, 1, 0>(n, rows, w, w_stride, panel,
                                          [](const block_q5_0& b, int e) { return !(b.qh[e / 8] >> (e % 8) & 1); });
}
void pack_panel_q5_K_masks(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  // Element e = 32k + l (in 64-element chunk k / 2, low nibbles for k even) keeps its fifth bit in
  // bit k of qh[l]; set where it is set: the kernel adds 16 there.
  pack_row_masks<block_q5_K, QK_K, 2, K_SCALE_SIZE>(
      n, rows, w, w_stride, panel, [](const block_q5_K& b, int e) { return (b.qh[e % 32] >> (e / 32) & 1) != 0; });
}
void pack_panel_q4_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q4_K, QK_K, 2, 1>(n, rows, w, w_stride, panel);
}

namespace {

// Weight e's 6-bit level (0..63) of a Q6_K block: in 128-weight half h, weight l + 32k (k = 0..3)
// takes nibble k / 2 of ql[64h + l + 32(k % 2)] and bits 2k, 2k + 1 of qh[32h + l].
int q6_level(const block_q6_K& b, int e) {
  const int h = e / 128, k = e % 128 / 32, l = e % 32;
  const int low = b.ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2)) & 0xF;
  return low | (b.qh[32 * h + l] >> (2 * k) & 3) << 4;
}

// The Q6_K panels' block: d, the 16 group scales, then per 16-weight group g 12 level bytes:
// byte 12g + 4t + c (t < 3, c < 4) = v(16g + 4t + c) << 2 | bits 2t, 2t + 1 of v(16g + 12 + c),
// with v = the level ^ kFlip (RVV flips bit 5: the 6-bit two's complement of level - 32; x86
// keeps the level, 0..63).
template <uint8_t kFlip>
void recut_q6_K(const block_q6_K& b, uint8_t* out) {
  std::memcpy(out, &b.d, 2);
  std::memcpy(out + 2, b.scales, sizeof b.scales);
  uint8_t* levels = out + 2 + sizeof b.scales;
  for (int g = 0; g < QK_K / 16; g++)
    for (int t = 0; t < 3; t++)
      for (int c = 0; c < 4; c++) {
        const int top = q6_level(b, 16 * g + 4 * t + c) ^ kFlip, spread = q6_level(b, 16 * g + 12 + c) ^ kFlip;
        levels[12 * g + 4 * t + c] = uint8_t(top << 2 | (spread >> (2 * t) & 3));
      }
}

// Q2_K / Q3_K: in 128-weight half h, weight 32k + l keeps its 2 low bits in bits 2k, 2k + 1 of
// qs[32h + l] (src/quant/k_quant_util.h).
int k_crumb(const uint8_t* qs, int e) { return qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3; }

// pack_panel_q2_K_bytes's block: d, dmin, the scales, then byte j = elements 4j .. 4j + 3's crumbs
// from the low bits up.
void recut_q2_K(const block_q2_K& b, uint8_t* out) {
  std::memcpy(out, &b.d, 2);
  std::memcpy(out + 2, &b.dmin, 2);
  std::memcpy(out + 4, b.scales, sizeof b.scales);
  uint8_t* levels = out + 4 + sizeof b.scales;
  for (int j = 0; j < QK_K / 4; j++) {
    levels[j] = 0;
    for (int i = 0; i < 4; i++) levels[j] |= uint8_t(k_crumb(b.qs, 4 * j + i) << (2 * i));
  }
}

// pack_panel_q3_K_bytes's block: d, the scales, then 3 bytes per 8 elements of u = level + 4
// (the crumb, plus 4 where the hmask bit is set: weight e's is bit e / 32 of hmask[e % 32]).
void recut_q3_K(const block_q3_K& b, uint8_t* out) {
  std::memcpy(out, &b.d, 2);
  std::memcpy(out + 2, b.scales, sizeof b.scales);
  uint8_t* levels = out + 2 + sizeof b.scales;
  for (int m = 0; m < QK_K / 8; m++) {
    int u[8];
    for (int i = 0; i < 8; i++) {
      const int e = 8 * m + i;
      u[i] = k_crumb(b.qs, e) | (b.hmask[e % 32] >> (e / 32) & 1) << 2;
    }
    levels[3 * m] = uint8_t(u[0] | u[1] << 3 | (u[6] & 3) << 6);
    levels[3 * m + 1] = uint8_t(u[2] | u[3] << 3 | (u[7] & 3) << 6);
    levels[3 * m + 2] = uint8_t(u[4] | u[5] << 3 | (u[6] >> 2) << 6 | (u[7] >> 2) << 7);
  }
}

// pack_panel_iq4_xs_bytes's block: d, scales_h, scales_l as stored, then byte j = the table
// indices of elements 2j (low nibble) and 2j + 1 (high). Stored, element 32ib + l is nibble l / 16
// of qs[16ib + l % 16].
void recut_iq4_xs(const block_iq4_xs& b, uint8_t* out) {
  constexpr size_t kFields = offsetof(block_iq4_xs, qs);
  std::memcpy(out, &b, kFields);
  const auto index = [&](int e) { return b.qs[16 * (e / 32) + e % 16] >> (4 * (e % 32 / 16)) & 0xF; };
  for (int j = 0; j < QK_K / 2; j++) out[kFields + size_t(j)] = uint8_t(index(2 * j) | index(2 * j + 1) << 4);
}

// The x86 layouts of Q2_K and Q3_K: the block with its trailing fp16 fields (kTail bytes: Q2_K's
// d, dmin; Q3_K's d) moved to the front, the rest as stored.
template <class Block, size_t kTail>
void recut_tail_first(const Block& b, uint8_t* out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&b);
  std::memcpy(out, bytes + sizeof(Block) - kTail, kTail);
  std::memcpy(out + kTail, bytes, sizeof(Block) - kTail);
}

}  // namespace

void pack_panel_q2_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q2_K, QK_K, 2, 4, 0, recut_tail_first<block_q2_K, 4>>(n, rows, w, w_stride, panel);
}
void pack_panel_q3_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q3_K, QK_K, 1, 4, 0, recut_tail_first<block_q3_K, 2>>(n, rows, w, w_stride, panel);
}
void pack_panel_q6_K(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q6_K, QK_K, 1, 4, 0, recut_q6_K<0>>(n, rows, w, w_stride, panel);
}
void pack_panel_iq4_xs(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_iq4_xs, QK_K, 2, 4>(n, rows, w, w_stride, panel);
}
void pack_panel_iq4_nl(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_iq4_nl, QK4_NL, 1, 4>(n, rows, w, w_stride, panel);
}

void pack_panel_q6_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q6_K, QK_K, 1, 1, 0, recut_q6_K<32>>(n, rows, w, w_stride, panel);
}
void pack_panel_q2_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q2_K, QK_K, 2, 1, 0, recut_q2_K>(n, rows, w, w_stride, panel);
}
void pack_panel_q3_K_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_q3_K, QK_K, 1, 1, 0, recut_q3_K>(n, rows, w, w_stride, panel);
}
void pack_panel_iq4_xs_bytes(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  pack_interleaved<block_iq4_xs, QK_K, 1, 1, 0, recut_iq4_xs>(n, rows, w, w_stride, panel);
}

void pack_panel_16bit(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  auto* out = static_cast<uint16_t*>(panel);
  for (int r = 0; r < rows; r++) {
    const auto* row = reinterpret_cast<const uint16_t*>(static_cast<const char*>(w) + size_t(r) * w_stride);
    for (int64_t k = 0; k < n; k++) out[size_t(k) * size_t(rows) + size_t(r)] = row[k];
  }
}

void pack_panel_16bit_pairs(int64_t n, int rows, const void* w, size_t w_stride, void* panel) {
  auto* out = static_cast<uint16_t*>(panel);
  const size_t r_count = size_t(rows);
  for (size_t r = 0; r < r_count; r++) {
    const auto* row = reinterpret_cast<const uint16_t*>(static_cast<const char*>(w) + r * w_stride);
    int64_t k = 0;
    for (; k + 2 <= n; k += 2) {
      const size_t at = (size_t(k / 2) * r_count + r) * 2;
      out[at] = row[k];
      out[at + 1] = row[k + 1];
    }
    if (k < n) out[size_t(k) * r_count + r] = row[k];
  }
}

WeightPacks::~WeightPacks() { g_repacked.fetch_sub(bytes_); }

bool WeightPacks::matches(const Entry& e, const Tensor& w, const Kernels& k) const {
  return e.packed.kernel == &k.panel[size_t(w.type)] && e.type == w.type &&
         std::memcmp(e.ne, w.ne, sizeof e.ne) == 0;
}

namespace {

// Whether weight w is read in g other than as the table of a GET_ROWS (which reads a few rows).
bool read_whole(const Graph& g, const Tensor& w) {
  for (const Tensor* node : g.nodes)
    for (int i = 0; i < kMaxSrc && node->src[i]; i++) {
      const Tensor* t = node->src[i];
      while (t->view_src) t = t->view_src;
      if (t->data == w.data && !(node->op == Op::GET_ROWS && i == 0)) return true;
    }
  return false;
}

}  // namespace

void WeightPacks::prepare(const Graph& g, const Kernels& k, ThreadPool& pool) {
  if (!repack_enabled()) return;
  for (const Tensor* node : g.nodes) {
    // A table only GET_ROWS reads keeps in memory the rows it has read (as a mapped file would).
    const Tensor* table = node->op == Op::GET_ROWS ? node->src[0] : nullptr;
    if (table && (table->flags & kFlagWeight) && !table->view_src && !released_.count(table->data) &&
        !read_whole(g, *table)) {
      gguf::File::release_pages(table->data, table->nbytes());
      released_.insert(table->data);
    }
    if (node->op != Op::MUL_MAT && node->op != Op::MUL_MAT_ID) continue;
    const Tensor& w = *node->src[0];
    const PanelKernel& pk = k.panel[size_t(w.type)];
    if (!packable(w, pk) || unpacked_.count(w.data)) continue;
    auto it = packs_.find(w.data);
    if (it != packs_.end()) {
      if (matches(it->second, w, k)) continue;
      bytes_ -= it->second.size;
      g_repacked.fetch_sub(it->second.size);
      packs_.erase(it);
    }
    const size_t panel_stride = w.nb[1] * size_t(pk.rows);
    // A matrix whose row count is not a multiple of the panel height (a vocabulary of 49155
    // rows) has its whole panels packed; mat_tile reads the last rows from the matrix.
    const int64_t n_panels = w.ne[1] * w.ne[2] / pk.rows;
    const size_t size = panel_stride * size_t(n_panels);
    // A copy the machine cannot hold beside everything else (a model that fills RAM once, its
    // mixture of experts above all) is not made: the row-major path gives the same results.
    // The reserve leaves room for what later steps allocate (longer batches, the server's slots).
    constexpr size_t kReserve = size_t(512) << 20;
    if (size + kReserve > available_memory_bytes()) {
      unpacked_.insert(w.data);  // every later graph would read the free memory for it again
      static std::once_flag told;
      std::call_once(told, [] {
        std::fprintf(stderr, "hart: too little free memory to repack the weights for this CPU; using them as stored (slower)\n");
      });
      continue;
    }
    auto* mem = static_cast<std::byte*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
    if (!mem) throw std::bad_alloc();
    pool.run([&](int ith, int nth) {
      for (int64_t p = n_panels * ith / nth; p < n_panels * (ith + 1) / nth; p++)
        pk.pack(w.ne[0], pk.rows, static_cast<const char*>(w.data) + size_t(p) * panel_stride, w.nb[1],
                mem + size_t(p) * panel_stride);
    });
    Entry e{{&pk, mem, panel_stride}, w.type, {}, {mem, std::free}, size};
    std::memcpy(e.ne, w.ne, sizeof e.ne);
    packs_.emplace(w.data, std::move(e));
    bytes_ += size;
    g_repacked.fetch_add(size);
    // The stored rows the panels stand in for need not stay in memory: a weight of a file gives
    // their pages back, read from the file again only where something reads them (GET_ROWS of a
    // tied embedding, another kernel set), so the weights are resident about once, not twice.
    gguf::File::release_pages(w.data, size);
    released_.insert(w.data);
  }
}

const PackedWeight* WeightPacks::find(const Tensor& w, const Kernels& k) const {
  if (!(w.flags & kFlagWeight)) return nullptr;
  const auto it = packs_.find(w.data);
  return it != packs_.end() && matches(it->second, w, k) ? &it->second.packed : nullptr;
}

size_t repacked_bytes() { return g_repacked.load(); }

bool repack_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("HART_REPACK");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return on;
}

}  // namespace hart::cpu
