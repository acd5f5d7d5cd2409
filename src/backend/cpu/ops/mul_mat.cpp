// MUL_MAT: y = X·Wᵀ, W [k, n, w2, w3] (any type with a vec_dot), X F32 [k, m, x2, x3], W's
// batch dims broadcast over X's (x2 % w2 == 0). Phase 1 converts X's rows to the weight type's
// activation type (skipped for contiguous F32); phase 2 computes tiles of (W rows × X rows),
// handed out dynamically so a slow thread (shared cores) does not hold the others up.
#include <algorithm>
#include <cstring>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

constexpr int64_t kTileW = 16;  // W rows per tile: with kTileX, an X tile stays in cache
constexpr int64_t kTileX = 16;  // X rows per tile (prefill); decode uses all of its few rows

struct Plan {
  Type act;
  bool convert;        // X rows go through the work buffer
  bool gather;         // X rows are strided (nb[0] != 4): gather into a contiguous float row
  size_t act_row;      // bytes of one converted X row
};

Plan plan(const Tensor& node, const Kernels& k) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  Plan p{};
  p.act = k.dot[size_t(w.type)].act_type;
  p.gather = x.nb[0] != sizeof(float);
  p.convert = p.act != Type::F32 || p.gather;
  p.act_row = row_size(p.act, x.ne[0]);
  return p;
}

size_t gather_bytes(const Tensor& node) { return size_t(node.src[1]->ne[0]) * sizeof(float); }

size_t mul_mat_work_size(const Tensor& node, const Kernels& k, int nth) {
  const Plan p = plan(node, k);
  if (!p.convert) return 0;
  const size_t rows = align_up(p.act_row * size_t(node.src[1]->nrows()));
  const bool gather_tmp = p.gather && p.act != Type::F32;
  return rows + (gather_tmp ? size_t(nth) * align_up(gather_bytes(node)) : 0);
}

// Phase 1: this thread's share of X rows, gathered and converted into the work buffer.
void convert_rows(const Tensor& x, const Plan& p, const OpContext& ctx) {
  const int64_t k = x.ne[0];
  const size_t rows_bytes = align_up(p.act_row * size_t(x.nrows()));
  float* tmp = p.gather && p.act != Type::F32
                   ? reinterpret_cast<float*>(ctx.work + rows_bytes + size_t(ctx.ith) * align_up(size_t(k) * sizeof(float)))
                   : nullptr;
  const auto [begin, end] = ctx.range(x.nrows());
  for (int64_t r = begin; r < end; r++) {
    std::byte* out = ctx.work + size_t(r) * p.act_row;
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

void compute_mul_mat(const Tensor& node, const OpContext& ctx) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  const Plan p = plan(node, ctx.k);
  if (p.convert) convert_rows(x, p, ctx);
  if (ctx.ith == 0) ctx.chunk.store(0, std::memory_order_relaxed);
  ctx.pool.barrier();  // converted rows complete, counter reset

  const VecDotFn dot = ctx.k.dot[size_t(w.type)].vec_dot;
  const int64_t k = x.ne[0], n = w.ne[1], m = x.ne[1];
  const int64_t r2 = x.ne[2] / w.ne[2], r3 = x.ne[3] / w.ne[3];
  const int64_t tile_x = m <= 4 ? m : kTileX;
  const int64_t tiles_w = (n + kTileW - 1) / kTileW, tiles_x = (m + tile_x - 1) / tile_x;
  const int64_t tiles_per_plane = tiles_w * tiles_x;
  const int64_t n_tiles = tiles_per_plane * x.ne[2] * x.ne[3];
  for (int64_t t = ctx.chunk.fetch_add(1, std::memory_order_relaxed); t < n_tiles;
       t = ctx.chunk.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t plane = t / tiles_per_plane;
    const int64_t i2 = plane % x.ne[2], i3 = plane / x.ne[2];
    const int64_t w0 = (t % tiles_per_plane) % tiles_w * kTileW;
    const int64_t x0 = (t % tiles_per_plane) / tiles_w * tile_x;
    const int64_t w1 = std::min(n, w0 + kTileW), x1 = std::min(m, x0 + tile_x);
    for (int64_t iw = w0; iw < w1; iw++) {
      const char* wrow = row_ptr(w, iw, i2 / r2, i3 / r3);
      for (int64_t ix = x0; ix < x1; ix++) {
        const void* xrow = p.convert ? static_cast<const void*>(ctx.work + size_t((plane * m) + ix) * p.act_row)
                                     : row_ptr(x, ix, i2, i3);
        dot(k, reinterpret_cast<float*>(row_ptr(node, ix, i2, i3)) + iw, wrow, xrow);
      }
    }
  }
}

bool mul_mat_supported(const Tensor& node, const Kernels& k) {
  const DotKernel& d = k.dot[size_t(node.src[0]->type)];
  return d.vec_dot && (d.act_type == Type::F32 || k.from_f32[size_t(d.act_type)]);
}

}  // namespace

OpImpl impl_mul_mat() { return {compute_mul_mat, mul_mat_work_size, mul_mat_supported}; }

}  // namespace hart::cpu
