// RMS_NORM, NORM, L2_NORM, SUM_ROWS, SOFT_MAX and TOP_K: one F32 row at a time through the row kernels.
#include <algorithm>
#include <cmath>

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
  // y = softmax(x * scale + mask); the mask [n0, >= n1, m2, m3] broadcasts over dims 2 and 3
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const float s = node.param_f32(0);
  const int64_t n = node.ne[0];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    ctx.k.scale(n, frow(a, r), s, y);
    if (mask) ctx.k.add(n, y, frow(*mask, {r.i1, r.i2 % mask->ne[2], r.i3 % mask->ne[3]}), y);
    ctx.k.softmax(n, y);
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
