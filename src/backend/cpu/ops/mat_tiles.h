// What MUL_MAT and MUL_MAT_ID share: converting activation rows to the weight type's activation
// type, the tile sizes, and one tile of W rows x X rows through the set's kernels (rows or panels).
#pragma once

#include <algorithm>

#include "backend/cpu/ops/ops.h"
#include "backend/cpu/repack.h"

namespace hart::cpu {

constexpr int64_t kPrivateRows = 8;     // up to this many X rows, each thread converts all of them
constexpr int64_t kTileX = 64;          // X rows per tile: their converted blocks stay in L2
constexpr int64_t kTileWMin = 32;       // W rows per tile: at least this many,
constexpr int64_t kTilesPerThread = 8;  // and about this many tiles per thread for balance
static_assert(kTileWMin % kMaxPanelRows == 0);

// W rows per tile for n W rows when x_tiles tiles of X rows share them: enough tiles for
// balance, in multiples of `unit` (a multiple of kTileWMin, so tiles are whole panels).
inline int64_t tile_rows_w(int64_t n, int nth, int64_t x_tiles, int64_t unit = kTileWMin) {
  const int64_t want_w = std::max<int64_t>(1, nth * kTilesPerThread / std::max<int64_t>(1, x_tiles));
  return std::max(unit, ((n + want_w - 1) / want_w + unit - 1) / unit * unit);
}

// The unit of tile_rows_w for tiles of several X rows against `packed` (nullptr: not repacked):
// the panel GEMM's preferred W rows, else kTileWMin.
inline int64_t tile_unit_w(const PackedWeight* packed, int64_t nx) {
  const int rows = packed && nx > 1 ? packed->kernel->tile_rows : 0;
  return rows > kTileWMin ? (rows + kTileWMin - 1) / kTileWMin * kTileWMin : kTileWMin;
}

inline size_t gather_bytes(int64_t k) { return align_up(size_t(k) * sizeof(float)); }

// The scratch mat_tile needs for up to nx X rows against w if the backend repacked it: the set's
// panel GEMM's (PanelKernel::scratch_bytes), part of the op's planned work buffer.
inline size_t panel_scratch_bytes(const Tensor& w, const Kernels& k, int64_t nx) {
  const PanelKernel& pk = k.panel[size_t(w.type)];
  return pk.rows > 0 ? align_up(pk.scratch_bytes(w.ne[0], nx)) : 0;
}

// X row `src` (k elements of src_type, F32 or F16, `stride` bytes apart) as a row of `act` at out;
// a strided or F16 row bound for a quantized type is gathered into tmp (k floats) first.
inline void convert_row(const Kernels& kern, Type act, int64_t k, const char* src, size_t stride, Type src_type,
                        float* tmp, std::byte* out) {
  const float* row = reinterpret_cast<const float*>(src);
  if (stride != sizeof(float) || src_type != Type::F32) {
    float* g = act == Type::F32 ? reinterpret_cast<float*>(out) : tmp;
    for (int64_t i = 0; i < k; i++) {
      const char* e = src + i * stride;
      g[i] = src_type == Type::F16 ? fp16_to_f32(*reinterpret_cast<const fp16_t*>(e)) : *reinterpret_cast<const float*>(e);
    }
    row = g;
  }
  if (act != Type::F32) kern.from_f32[size_t(act)](row, out, k);
  else if (row != reinterpret_cast<const float*>(out)) std::copy(row, row + k, reinterpret_cast<float*>(out));
}

// y[j * y_stride + i] = dot(W row w0 + i, X row j) for i < nw, j < nx, with W rows from
// `matrix` (w_rows: the first of its rows, w_stride bytes apart) or, when it was repacked, from
// `packed`, whose panels of matrix `plane` start plane * n / rows panels in (the rows past the
// last whole panel of a 2-D weight, n % rows of them, come from the matrix); the panel GEMM gets
// `scratch` (panel_scratch_bytes(w, kernels, nx) bytes). The set's GEMM for
// several X rows, else vec_dot per (W row, X row): for a lone X row (decode) nothing is reused
// and the row-at-a-time dot streams the weights fastest (measured: gemm/q8_0/avx512_vnni/1
// takes twice the CPU time of gemv/q8_0/avx512_vnni in bench/).
inline void mat_tile(const DotKernel& d, const PackedWeight* packed, int64_t k, int64_t n, int64_t plane, int64_t w0,
                     int64_t nw, int64_t nx, const char* w_rows, size_t w_stride, const std::byte* x, size_t x_stride,
                     float* y, size_t y_stride, std::byte* scratch) {
  if (packed) {
    const int rows = packed->kernel->rows;
    const int64_t in_panels = std::clamp<int64_t>(n / rows * rows - w0, 0, nw);  // w0: a panel's first row
    if (in_panels > 0)
      packed->kernel->gemm(k, in_panels / rows, nx, packed->data + size_t((plane * n + w0) / rows) * packed->panel_stride,
                           packed->panel_stride, x, x_stride, y, y_stride, scratch);
    if (in_panels == nw) return;
    w_rows += size_t(in_panels) * w_stride;
    y += in_panels;
    nw -= in_panels;
  }
  if (d.gemm && nx > 1) {
    d.gemm(k, nw, nx, w_rows, w_stride, x, x_stride, y, y_stride);
  } else {
    for (int64_t j = 0; j < nx; j++)
      for (int64_t i = 0; i < nw; i++)
        d.vec_dot(k, y + size_t(j) * y_stride + i, w_rows + size_t(i) * w_stride, x + size_t(j) * x_stride);
  }
}

// Whether the set can multiply by weights of w's type: a dot kernel and its activation converter.
inline bool mat_supported(const Tensor& w, const Kernels& k) {
  const DotKernel& d = k.dot[size_t(w.type)];
  return d.vec_dot && (d.act_type == Type::F32 || k.from_f32[size_t(d.act_type)]);
}

}  // namespace hart::cpu
