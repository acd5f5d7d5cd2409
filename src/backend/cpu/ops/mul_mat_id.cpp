// MUL_MAT_ID: the experts' products of a mixture of experts. experts [k, n, E] (any MUL_MAT
// type), X F32 [k, n_b, T] (n_b = 1 or n_used), ids I32 [n_used, T] -> y F32 [n, n_used, T] with
// y(:, i, t) = experts(:, :, ids(i, t)) @ X(:, i % n_b, t).
//
// The n_used * T (slot, token) pairs are grouped by expert, a counting sort each thread does for
// itself (a few thousand integers: cheaper than a barrier), and each pair's X row is converted to
// the activation type in group order, so one expert's rows are consecutive. Each expert is then
// one MUL_MAT of its rows: tiles of (W rows x X rows) through mat_tile (the set's GEMM, or its
// panel GEMM on repacked experts), handed out dynamically over all experts. Decode reads only
// the selected experts' weights; prefill reads each selected expert once per tile of up to
// kTileX of its tokens. Results go from a per-thread scratch tile to their (slot, token) rows of
// y (a lone X row: straight into y).
#include <algorithm>
#include <string>

#include "backend/cpu/ops/mat_tiles.h"

namespace hart::cpu {
namespace {

struct Shape {
  int64_t k, n, n_expert, n_used, n_b, pairs;
  Type act;
  size_t act_row;      // bytes of one converted X row
  size_t rows_bytes;   // all pairs' converted rows
  bool privately;      // each thread converts every row into its own copy (few pairs, or one thread)
  int64_t max_tile_w;  // the tallest W tile: with the most X tiles the pairs can make
  size_t panel_bytes;  // mat_tile's scratch for a tile of X rows
};

Shape shape(const Tensor& node, const Kernels& k, int nth) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  Shape s{};
  s.k = w.ne[0];
  s.n = w.ne[1];
  s.n_expert = w.ne[2];
  s.n_used = node.ne[1];
  s.n_b = x.ne[1];
  s.pairs = s.n_used * node.ne[2];
  s.act = k.dot[size_t(w.type)].act_type;
  s.act_row = row_size(s.act, s.k);
  s.rows_bytes = align_up(s.act_row * size_t(s.pairs));
  s.privately = nth == 1 || s.pairs <= kPrivateRows;
  // Each expert's X tiles hold up to kTileX pairs: at most pairs / kTileX + E tiles, and never
  // more than one per pair. Fewer X tiles make shorter W tiles (tile_rows_w), so this bounds all.
  s.max_tile_w = tile_rows_w(s.n, nth, std::min(s.pairs, s.pairs / kTileX + s.n_expert));
  s.panel_bytes = panel_scratch_bytes(w, k, std::min(s.pairs, kTileX));
  return s;
}

// One thread's slice: the pairs in group order, each expert's first pair and first X tile, a
// scratch tile, a gather row, the panel GEMM's scratch.
struct Slice {
  int32_t* order;      // [pairs]: pair r = t * n_used + i, grouped by expert
  int64_t* start;      // [E + 1]: expert e's pairs are order[start[e] .. start[e + 1])
  int64_t* tile_start; // [E + 1]: expert e's X tiles are [tile_start[e], tile_start[e + 1])
  float* tile;         // [max_tile_w * kTileX]
  float* gather;       // [k]
  std::byte* panel;    // [panel_bytes]
};

size_t slice_bytes(const Shape& s) {
  return align_up(size_t(s.pairs) * 4) + 2 * align_up(size_t(s.n_expert + 1) * 8) +
         align_up(size_t(s.max_tile_w * kTileX) * 4) + gather_bytes(s.k) + s.panel_bytes;
}

// Layout: the converted rows (nth copies when converted privately), then one Slice per thread.
size_t work_size(const Tensor& node, const Kernels& k, int nth) {
  const Shape s = shape(node, k, nth);
  return s.rows_bytes * size_t(s.privately ? nth : 1) + size_t(nth) * slice_bytes(s);
}

bool team(const Tensor& node, const Kernels& k, int nth) { return !shape(node, k, nth).privately; }

Slice slice_of(const Shape& s, const OpContext& ctx) {
  std::byte* p = ctx.work + s.rows_bytes * size_t(s.privately ? ctx.nth : 1) + size_t(ctx.ith) * slice_bytes(s);
  Slice sl{};
  sl.order = reinterpret_cast<int32_t*>(p);
  p += align_up(size_t(s.pairs) * 4);
  sl.start = reinterpret_cast<int64_t*>(p);
  p += align_up(size_t(s.n_expert + 1) * 8);
  sl.tile_start = reinterpret_cast<int64_t*>(p);
  p += align_up(size_t(s.n_expert + 1) * 8);
  sl.tile = reinterpret_cast<float*>(p);
  p += align_up(size_t(s.max_tile_w * kTileX) * 4);
  sl.gather = reinterpret_cast<float*>(p);
  p += gather_bytes(s.k);
  sl.panel = p;
  return sl;
}

int32_t expert_of(const Tensor& ids, int64_t r, int64_t n_used) {
  const char* p = static_cast<const char*>(ids.data) + (r % n_used) * ids.nb[0] + (r / n_used) * ids.nb[1];
  return *reinterpret_cast<const int32_t*>(p);
}

// Counting sort of the pairs by expert; a pair with an id outside [0, E) is reported and left out.
void group(const Tensor& node, const Shape& s, const OpContext& ctx, const Slice& sl) {
  const Tensor& ids = *node.src[2];
  const int64_t E = s.n_expert;
  std::fill(sl.start, sl.start + E + 1, 0);
  for (int64_t r = 0; r < s.pairs; r++) {
    const int32_t e = expert_of(ids, r, s.n_used);
    if (e >= 0 && e < E) sl.start[e + 1]++;
    else if (ctx.ith == 0)
      ctx.errors.fail("MUL_MAT_ID: expert id " + std::to_string(e) + " is outside 0.." + std::to_string(E - 1) +
                      (node.name[0] ? std::string(" in '") + node.name + "'" : ""));
  }
  sl.tile_start[0] = 0;
  for (int64_t e = 0; e < E; e++) {
    sl.tile_start[e + 1] = sl.tile_start[e] + (sl.start[e + 1] + kTileX - 1) / kTileX;
    sl.start[e + 1] += sl.start[e];
  }
  // start[e] serves as expert e's cursor (ending at start[e + 1]), then everything moves back one.
  for (int64_t r = 0; r < s.pairs; r++) {
    const int32_t e = expert_of(ids, r, s.n_used);
    if (e >= 0 && e < E) sl.order[sl.start[e]++] = int32_t(r);
  }
  for (int64_t e = E; e > 0; e--) sl.start[e] = sl.start[e - 1];
  sl.start[0] = 0;
}

// The grouped pairs [begin, end) (positions in order[]) converted into rows, position by position.
void convert_pairs(const Tensor& node, const Shape& s, const OpContext& ctx, const Slice& sl, std::byte* rows,
                   int64_t begin, int64_t end) {
  const Tensor& x = *node.src[1];
  for (int64_t p = begin; p < end; p++) {
    const int64_t r = sl.order[p];
    convert_row(ctx.k, s.act, s.k, row_ptr(x, (r % s.n_used) % s.n_b, r / s.n_used, 0), x.nb[0], x.type, sl.gather,
                rows + size_t(p) * s.act_row);
  }
}

void compute(const Tensor& node, const OpContext& ctx) {
  const Tensor& w = *node.src[0];
  const Shape s = shape(node, ctx.k, ctx.nth);
  const Slice sl = slice_of(s, ctx);
  group(node, s, ctx, sl);
  const int64_t n_grouped = sl.start[s.n_expert];
  const int64_t x_tiles = sl.tile_start[s.n_expert];
  const int64_t tile_w = tile_rows_w(s.n, ctx.nth, x_tiles);
  const int64_t tiles_w = (s.n + tile_w - 1) / tile_w;
  const int64_t n_tiles = x_tiles * tiles_w;
  if (s.privately && ctx.chunk.load(std::memory_order_relaxed) >= n_tiles) return;  // a late piece

  std::byte* rows = ctx.work;
  if (s.privately) {
    rows += s.rows_bytes * size_t(ctx.ith);
    convert_pairs(node, s, ctx, sl, rows, 0, n_grouped);
  } else {
    const auto [begin, end] = ctx.range(n_grouped);
    convert_pairs(node, s, ctx, sl, rows, begin, end);
    ctx.pool.barrier();  // every converted row is complete
  }

  const DotKernel& d = ctx.k.dot[size_t(w.type)];
  const PackedWeight* packed = ctx.packs ? ctx.packs->find(w, ctx.k) : nullptr;
  for (int64_t t = ctx.chunk.fetch_add(1, std::memory_order_relaxed); t < n_tiles;
       t = ctx.chunk.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t xt = t / tiles_w, w0 = t % tiles_w * tile_w;
    const int64_t e = std::upper_bound(sl.tile_start, sl.tile_start + s.n_expert + 1, xt) - sl.tile_start - 1;
    const int64_t p0 = sl.start[e] + (xt - sl.tile_start[e]) * kTileX;  // the tile's first grouped pair
    const int64_t nx = std::min(sl.start[e + 1] - p0, kTileX), nw = std::min(s.n, w0 + tile_w) - w0;
    const auto y_row = [&](int64_t p) {
      const int64_t r = sl.order[p];
      return reinterpret_cast<float*>(row_ptr(node, r % s.n_used, r / s.n_used, 0)) + w0;
    };
    float* y = nx == 1 ? y_row(p0) : sl.tile;
    mat_tile(d, packed, s.k, s.n, e, w0, nw, nx, row_ptr(w, w0, e, 0), w.nb[1], rows + size_t(p0) * s.act_row,
             s.act_row, y, size_t(nw), sl.panel);
    if (nx > 1)
      for (int64_t j = 0; j < nx; j++) std::copy(y + j * nw, y + (j + 1) * nw, y_row(p0 + j));
  }
}

bool supported(const Tensor& node, const Kernels& k) { return mat_supported(*node.src[0], k); }

}  // namespace

OpImpl impl_mul_mat_id() { return {compute, work_size, supported, team}; }

}  // namespace hart::cpu
