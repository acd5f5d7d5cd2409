// MUL_MAT: y = X·Wᵀ, W [k, n, w2, w3] (any type with a vec_dot), X F32 [k, m, x2, x3], W's
// batch dims broadcast over X's (x2 % w2 == 0).
//
// Phase 1 converts X's rows to the weight type's activation type (Q8_0, Q8_K, ...; skipped for
// contiguous F32) once. With few rows (decode) every thread converts all of them into its own
// slice, which costs less than the barrier it saves; otherwise the threads share the work and
// meet at a barrier. Phase 2 computes tiles of (W rows × X rows) with the set's GEMM kernel,
// which reuses each weight block it loads across several X rows (prefill); tiles are handed
// out dynamically so a thread slowed down by other processes does not hold the others up.
// A weight the backend repacked (repack.h) is read from its panels with the set's panel GEMM;
// W tiles are whole panels since every panel height divides kTileWMin.
#include <algorithm>
#include <cstring>

#include "backend/cpu/ops/ops.h"
#include "backend/cpu/repack.h"

namespace hart::cpu {
namespace {

constexpr int64_t kPrivateRows = 8;   // up to this many X rows, each thread converts all of them
constexpr int64_t kTileX = 64;        // X rows per tile: their converted blocks stay in L2
constexpr int64_t kTileWMin = 32;     // W rows per tile: at least this many,
constexpr int64_t kTilesPerThread = 8;  // and about this many tiles per thread for balance
static_assert(kTileWMin % kMaxPanelRows == 0);

struct Plan {
  Type act;
  bool convert;   // X rows go through the work buffer
  bool gather;    // X rows are strided (nb[0] != 4): gather into a contiguous float row
  bool privately; // each thread converts every X row into its own slice
  size_t act_row; // bytes of one converted X row
  size_t rows_bytes;  // bytes of all converted X rows
};

Plan plan(const Tensor& node, const Kernels& k, int nth) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  Plan p{};
  p.act = k.dot[size_t(w.type)].act_type;
  p.gather = x.nb[0] != sizeof(float);
  p.convert = p.act != Type::F32 || p.gather;
  p.privately = nth == 1 || x.nrows() <= kPrivateRows;
  p.act_row = row_size(p.act, x.ne[0]);
  p.rows_bytes = align_up(p.act_row * size_t(x.nrows()));
  return p;
}

size_t gather_bytes(int64_t k) { return align_up(size_t(k) * sizeof(float)); }
bool gather_tmp(const Plan& p) { return p.gather && p.act != Type::F32; }

// Layout: the converted rows (nth copies when converted privately), then one gather row per thread.
size_t mul_mat_work_size(const Tensor& node, const Kernels& k, int nth) {
  const Plan p = plan(node, k, nth);
  if (!p.convert) return 0;
  return p.rows_bytes * size_t(p.privately ? nth : 1) + (gather_tmp(p) ? size_t(nth) * gather_bytes(node.src[1]->ne[0]) : 0);
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
  for (int64_t r = begin; r < end; r++) {
    std::byte* out = rows + size_t(r) * p.act_row;
    const char* src = row_ptr(x, row_index(x, r));
    const float* row = reinterpret_cast<const float*>(src);
    if (p.gather) {
      float* g = p.act == Type::F32 ? reinterpret_cast<float*>(out) : tmp;
      for (int64_t i = 0; i < k; i++) g[i] = *reinterpret_cast<const float*>(src + i * x.nb[0]);
      row = g;
    }
    if (p.act != Type::F32) ctx.k.from_f32[size_t(p.act)](row, out, k);
  }
}

// Calls the set's `gemm` for several X rows, else vec_dot per (W row, X row): for a lone X row
// (decode) nothing is reused and the row-at-a-time dot streams the weights fastest (measured:
// gemm/q8_0/avx512_vnni/1 takes twice the CPU time of gemv/q8_0/avx512_vnni in bench/).
void tile(const DotKernel& d, int64_t k, int64_t nw, int64_t nx, const char* w, size_t w_stride, const std::byte* x,
          size_t x_stride, float* y, size_t y_stride) {
  if (d.gemm && nx > 1) {
    d.gemm(k, nw, nx, w, w_stride, x, x_stride, y, y_stride);
    return;
  }
  for (int64_t j = 0; j < nx; j++)
    for (int64_t i = 0; i < nw; i++) d.vec_dot(k, y + size_t(j) * y_stride + i, w + size_t(i) * w_stride, x + size_t(j) * x_stride);
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
  // W rows per tile: enough tiles for balance, in multiples of kTileWMin.
  const int64_t want_w = std::max<int64_t>(1, ctx.nth * kTilesPerThread / (tiles_x * planes));
  const int64_t tile_w = std::max(kTileWMin, ((n + want_w - 1) / want_w + kTileWMin - 1) / kTileWMin * kTileWMin);
  const int64_t tiles_w = (n + tile_w - 1) / tile_w;
  const int64_t tiles_per_plane = tiles_w * tiles_x;
  const int64_t n_tiles = tiles_per_plane * planes;
  std::byte* rows = ctx.work;
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
    if (packed) {
      const int rows = packed->kernel->rows;
      packed->kernel->gemm(k, nw / rows, nx, packed->data + size_t(w0 / rows) * packed->panel_stride,
                           packed->panel_stride, xrow, x_stride, y, y_stride);
    } else {
      tile(d, k, nw, nx, row_ptr(w, w0, i2 / r2, i3 / r3), w.nb[1], xrow, x_stride, y, y_stride);
    }
  }
}

bool mul_mat_supported(const Tensor& node, const Kernels& k) {
  const DotKernel& d = k.dot[size_t(node.src[0]->type)];
  return d.vec_dot && (d.act_type == Type::F32 || k.from_f32[size_t(d.act_type)]);
}

}  // namespace

OpImpl impl_mul_mat() { return {compute_mul_mat, mul_mat_work_size, mul_mat_supported, mul_mat_team}; }

}  // namespace hart::cpu
