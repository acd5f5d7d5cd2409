// MUL_MAT: y = X·Wᵀ, W [k, n, w2, w3] (any type with a vec_dot), X F32 or F16 [k, m, x2, x3],
// W's batch dims broadcast over X's (x2 % w2 == 0).
//
// Phase 1 converts X's rows to the weight type's activation type (Q8_0, Q8_K, ...; skipped for
// contiguous F32) once. With few rows (decode) every thread converts all of them into its own
// slice, which costs less than the barrier it saves; otherwise the threads share the work and
// meet at a barrier. Phase 2 computes tiles of (W rows × X rows) with the set's GEMM kernel,
// which reuses each weight block it loads across several X rows (prefill); tiles are handed
// out dynamically so a thread slowed down by other processes does not hold the others up.
// A weight the backend repacked (repack.h) is read from its panels with the set's panel GEMM;
// W tiles are whole panels since every panel height divides kTileWMin. The tile sizes and the
// tile itself are mat_tiles.h's, shared with MUL_MAT_ID.
#include <cstring>

#include "backend/cpu/ops/mat_tiles.h"

namespace hart::cpu {
namespace {

struct Plan {
  Type act;
  bool convert;   // X rows go through the work buffer
  bool gather;    // X rows are strided or F16: gather into a contiguous float row
  bool privately; // each thread converts every X row into its own slice
  size_t act_row; // bytes of one converted X row
  size_t rows_bytes;  // bytes of all converted X rows
};

Plan plan(const Tensor& node, const Kernels& k, int nth) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  Plan p{};
  p.act = k.dot[size_t(w.type)].act_type;
  p.gather = x.nb[0] != sizeof(float) || x.type != Type::F32;
  p.convert = p.act != Type::F32 || p.gather;
  p.privately = nth == 1 || x.nrows() <= kPrivateRows;
  p.act_row = row_size(p.act, x.ne[0]);
  p.rows_bytes = align_up(p.act_row * size_t(x.nrows()));
  return p;
}

bool gather_tmp(const Plan& p) { return p.gather && p.act != Type::F32; }

// Layout: the converted rows (nth copies when converted privately), one gather row per thread,
// then one panel GEMM scratch per thread.
size_t converted_bytes(const Plan& p, int64_t k, int nth) {
  if (!p.convert) return 0;
  return p.rows_bytes * size_t(p.privately ? nth : 1) + (gather_tmp(p) ? size_t(nth) * gather_bytes(k) : 0);
}

size_t tile_scratch_bytes(const Tensor& node, const Kernels& k) {
  return panel_scratch_bytes(*node.src[0], k, std::min(node.src[1]->ne[1], kTileX));
}

size_t mul_mat_work_size(const Tensor& node, const Kernels& k, int nth) {
  return converted_bytes(plan(node, k, nth), node.src[1]->ne[0], nth) + size_t(nth) * tile_scratch_bytes(node, k);
}

bool mul_mat_team(const Tensor& node, const Kernels& k, int nth) {
  const Plan p = plan(node, k, nth);
  return p.convert && !p.privately;
}

// Phase 1: rows [begin, end) of X, gathered and converted into `rows`.
void convert_rows(const Tensor& x, const Plan& p, const OpContext& ctx, std::byte* rows, int64_t begin, int64_t end) {
  const int64_t k = x.ne[0];
  const size_t copies = p.privately ? size_t(ctx.nth) : 1;
  float* tmp = gather_tmp(p) ? reinterpret_cast<float*>(ctx.work + p.rows_bytes * copies +
                                                        size_t(ctx.ith) * gather_bytes(k))
                             : nullptr;
  for (int64_t r = begin; r < end; r++)
    convert_row(ctx.k, p.act, k, row_ptr(x, row_index(x, r)), x.nb[0], x.type, tmp, rows + size_t(r) * p.act_row);
}

void compute_mul_mat(const Tensor& node, const OpContext& ctx) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  const Plan p = plan(node, ctx.k, ctx.nth);
  const DotKernel& d = ctx.k.dot[size_t(w.type)];
  const PackedWeight* packed = ctx.packs ? ctx.packs->find(w, ctx.k) : nullptr;
  const int64_t k = x.ne[0], n = w.ne[1], m = x.ne[1];
  const int64_t r2 = x.ne[2] / w.ne[2], r3 = x.ne[3] / w.ne[3];
  const int64_t tile_x = std::min(m, kTileX);
  const int64_t tiles_x = (m + tile_x - 1) / tile_x;
  const int64_t planes = x.ne[2] * x.ne[3];
  const int64_t tile_w = tile_rows_w(n, ctx.nth, tiles_x * planes, tile_unit_w(packed, tile_x));
  const int64_t tiles_w = (n + tile_w - 1) / tile_w;
  const int64_t tiles_per_plane = tiles_w * tiles_x;
  const int64_t n_tiles = tiles_per_plane * planes;
  std::byte* rows = ctx.work;
  std::byte* scratch = ctx.work + converted_bytes(p, k, ctx.nth) + size_t(ctx.ith) * tile_scratch_bytes(node, ctx.k);
  if (!mul_mat_team(node, ctx.k, ctx.nth) && ctx.chunk.load(std::memory_order_relaxed) >= n_tiles)
    return;  // a late piece: the other pieces took every tile
  if (p.convert && p.privately) {
    rows += p.rows_bytes * size_t(ctx.ith);
    convert_rows(x, p, ctx, rows, 0, x.nrows());
  } else if (p.convert) {
    const auto [begin, end] = ctx.range(x.nrows());
    convert_rows(x, p, ctx, rows, begin, end);
    ctx.pool.barrier();  // every converted row is complete
  }

  const size_t y_stride = node.nb[1] / sizeof(float);
  for (int64_t t = ctx.chunk.fetch_add(1, std::memory_order_relaxed); t < n_tiles;
       t = ctx.chunk.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t plane = t / tiles_per_plane;
    const int64_t i2 = plane % x.ne[2], i3 = plane / x.ne[2];
    const int64_t w0 = (t % tiles_per_plane) % tiles_w * tile_w;
    const int64_t x0 = (t % tiles_per_plane) / tiles_w * tile_x;
    const int64_t nw = std::min(n, w0 + tile_w) - w0, nx = std::min(m, x0 + tile_x) - x0;
    const std::byte* xrow = p.convert ? rows + size_t(plane * m + x0) * p.act_row
                                      : reinterpret_cast<const std::byte*>(row_ptr(x, x0, i2, i3));
    const size_t x_stride = p.convert ? p.act_row : x.nb[1];
    float* y = reinterpret_cast<float*>(row_ptr(node, x0, i2, i3)) + w0;
    mat_tile(d, packed, k, n, i2 / r2 + (i3 / r3) * w.ne[2], w0, nw, nx, row_ptr(w, w0, i2 / r2, i3 / r3), w.nb[1],
             xrow, x_stride, y, y_stride, scratch);
  }
}

bool mul_mat_supported(const Tensor& node, const Kernels& k) { return mat_supported(*node.src[0], k); }

}  // namespace

OpImpl impl_mul_mat() { return {compute_mul_mat, mul_mat_work_size, mul_mat_supported, mul_mat_team}; }

}  // namespace hart::cpu
