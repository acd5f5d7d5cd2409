// RMS_NORM, NORM, L2_NORM, SUM_ROWS, SOFT_MAX and TOP_K: one F32 row at a time through the row kernels.
#include <algorithm>
#include <cmath>

#include "graph/graph.h"

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

void compute_rms_norm(const Tensor& node, const OpContext& ctx) {
  const float eps = node.param_f32(0);
  for_my_rows(node, ctx, [&](float* y, RowIndex r) { ctx.k.rms_norm(node.ne[0], frow(*node.src[0], r), y, eps); });
}

void compute_norm(const Tensor& node, const OpContext& ctx) {
  const float eps = node.param_f32(0);
  for_my_rows(node, ctx, [&](float* y, RowIndex r) { ctx.k.norm(node.ne[0], frow(*node.src[0], r), y, eps); });
}

void compute_l2_norm(const Tensor& node, const OpContext& ctx) {
  const float eps = node.param_f32(0);
  const int64_t n = node.ne[0];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    const float* x = frow(*node.src[0], r);
    ctx.k.scale(n, x, 1.0f / std::max(std::sqrt(ctx.k.dot_f32(n, x, x)), eps), y);
  });
}

void compute_sum_rows(const Tensor& node, const OpContext& ctx) {
  const Tensor& a = *node.src[0];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    const float* x = frow(a, r);
    float sum = 0.0f;
    for (int64_t i = 0; i < a.ne[0]; i++) sum += x[i];
    y[0] = sum;
  });
}

void compute_soft_max(const Tensor& node, const OpContext& ctx) {
  // y = softmax(x * scale + slope * mask); the mask [n0, >= n1, m2, m3] broadcasts over dims 2
  // and 3; a head's sink joins the max and the denominator (graph.h)
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const Tensor* sinks = node.src[2];
  const float s = node.param_f32(0), max_bias = node.param_f32(1);
  const int64_t n = node.ne[0];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    ctx.k.scale(n, frow(a, r), s, y);
    if (mask) {
      const char* m = row_ptr(*mask, r.i1, r.i2 % mask->ne[2], r.i3 % mask->ne[3]);
      const float slope = alibi_slope(max_bias, r.i2, a.ne[2]);
      if (mask->type == Type::F32 && slope == 1.0f) ctx.k.add(n, y, reinterpret_cast<const float*>(m), y);
      else for (int64_t i = 0; i < n; i++) y[i] += slope * f32_or_f16_at(*mask, m, i);
    }
    if (!sinks) {
      ctx.k.softmax(n, y);
      return;
    }
    const float sink = static_cast<const float*>(sinks->data)[r.i2];
    const float top = std::max(sink, *std::max_element(y, y + n));
    for (int64_t i = 0; i < n; i++) y[i] -= top;
    ctx.k.exp(n, y, y);
    double sum = std::exp(double(sink - top));
    for (int64_t i = 0; i < n; i++) sum += y[i];
    ctx.k.scale(n, y, float(1.0 / sum), y);
  });
}

void compute_top_k(const Tensor& node, const OpContext& ctx) {
  const Tensor& a = *node.src[0];
  const auto [begin, end] = ctx.range(node.nrows());
  for (int64_t r = begin; r < end; r++) {
    const RowIndex ri = row_index(node, r);
    ctx.k.top_k(a.ne[0], frow(a, ri), int(node.ne[0]), reinterpret_cast<int32_t*>(row_ptr(node, ri)));
  }
}

}  // namespace

OpImpl impl_top_k() { return {compute_top_k, nullptr, nullptr}; }
OpImpl impl_rms_norm() { return {compute_rms_norm, nullptr, nullptr}; }
OpImpl impl_norm() { return {compute_norm, nullptr, nullptr}; }
OpImpl impl_l2_norm() { return {compute_l2_norm, nullptr, nullptr}; }
OpImpl impl_sum_rows() { return {compute_sum_rows, nullptr, nullptr}; }
OpImpl impl_soft_max() { return {compute_soft_max, nullptr, nullptr}; }

}  // namespace hart::cpu
