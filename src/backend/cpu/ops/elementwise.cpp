// ADD, SUB, MUL, DIV (src1 broadcast over src0), SCALE, CLAMP, UNARY and GLU: row by row over F32 rows.
#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

using BinaryFn = void (*)(int64_t, const float*, const float*, float*);

void compute_binary(const Tensor& node, const OpContext& ctx) {
  // a [n0, n1, n2, n3] op b [m0, m1, m2, m3] with n_i % m_i == 0 -> [n0, n1, n2, n3]
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const BinaryFn fn = node.op == Op::ADD ? ctx.k.add
                      : node.op == Op::SUB ? ctx.k.sub
                      : node.op == Op::MUL ? ctx.k.mul
                                           : ctx.k.div;
  const int64_t m = b.ne[0], repeats = a.ne[0] / m;
  // A short row of b repeated along a's (MoE: one router weight per expert output row, m = 1)
  // is laid out kTile times over in a buffer, so each kernel call covers up to kTile floats
  // instead of m (1024 calls of one element each per row, 4% of a MoE model's decode).
  constexpr int64_t kTile = 256;
  const int64_t copies = std::min(repeats, std::max<int64_t>(1, kTile / m));
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    const float* x = frow(a, r);
    const float* z = frow(b, {r.i1 % b.ne[1], r.i2 % b.ne[2], r.i3 % b.ne[3]});
    float tiled[kTile];
    if (copies > 1) {
      for (int64_t c = 0; c < copies; c++) std::copy(z, z + m, tiled + c * m);
      z = tiled;
    }
    for (int64_t j = 0; j < repeats; j += copies)
      fn(std::min(copies, repeats - j) * m, x + j * m, z, y + j * m);
  });
}

void compute_scale(const Tensor& node, const OpContext& ctx) {
  // y = x * s + bias
  const float s = node.param_f32(0), bias = node.param_f32(1);
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    ctx.k.scale(node.ne[0], frow(*node.src[0], r), s, y);
    if (bias != 0.0f)
      for (int64_t i = 0; i < node.ne[0]; i++) y[i] += bias;
  });
}

void compute_clamp(const Tensor& node, const OpContext& ctx) {
  const float lo = node.param_f32(0), hi = node.param_f32(1);
  for_my_rows(node, ctx, [&](float* y, RowIndex r) { ctx.k.clamp(node.ne[0], frow(*node.src[0], r), lo, hi, y); });
}

template <float (*F)(float)>
void map(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; i++) y[i] = F(x[i]);
}
// ggml's scalar definitions (ggml-cpu vec.h / unary-ops.cpp).
float relu(float x) { return std::max(x, 0.0f); }
float neg(float x) { return -x; }
float exp(float x) { return std::exp(x); }
float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }  // as ggml: x above 20
float abs(float x) { return std::fabs(x); }
float sgn(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f; }
float step(float x) { return x > 0.0f ? 1.0f : 0.0f; }
float elu(float x) { return x > 0.0f ? x : std::expm1(x); }
float gelu_quick(float x) { return x / (1.0f + std::exp(-1.702f * x)); }
float hardsigmoid(float x) { return std::min(1.0f, std::max(0.0f, (x + 3.0f) / 6.0f)); }
float hardswish(float x) { return x * hardsigmoid(x); }
float expm1(float x) { return std::expm1(x); }
float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678f)); }
float floor(float x) { return std::floor(x); }
float ceil(float x) { return std::ceil(x); }
float round(float x) { return std::round(x); }
float trunc(float x) { return std::trunc(x); }
float sqr(float x) { return x * x; }

using UnaryFn = void (*)(int64_t, const float*, float*);

UnaryFn unary_fn(const Kernels& k, Unary u) {
  switch (u) {
    case Unary::SILU: return k.silu;
    case Unary::GELU: return k.gelu;
    case Unary::TANH: return k.tanh;
    case Unary::SIGMOID: return k.sigmoid;
    case Unary::RELU: return map<relu>;
    case Unary::NEG: return map<neg>;
    case Unary::EXP: return map<exp>;
    case Unary::SOFTPLUS: return map<softplus>;
    case Unary::ABS: return map<abs>;
    case Unary::SGN: return map<sgn>;
    case Unary::STEP: return map<step>;
    case Unary::ELU: return map<elu>;
    case Unary::GELU_QUICK: return map<gelu_quick>;
    case Unary::HARDSWISH: return map<hardswish>;
    case Unary::HARDSIGMOID: return map<hardsigmoid>;
    case Unary::EXPM1: return map<expm1>;
    case Unary::GELU_ERF: return map<gelu_erf>;
    case Unary::FLOOR: return map<floor>;
    case Unary::CEIL: return map<ceil>;
    case Unary::ROUND: return map<round>;
    case Unary::TRUNC: return map<trunc>;
    case Unary::SQR: return map<sqr>;
    case Unary::COUNT: break;
  }
  return nullptr;
}

void compute_unary(const Tensor& node, const OpContext& ctx) {
  const UnaryFn fn = unary_fn(ctx.k, Unary(node.params[0]));
  for_my_rows(node, ctx, [&](float* y, RowIndex r) { fn(node.ne[0], frow(*node.src[0], r), y); });
}

void compute_glu(const Tensor& node, const OpContext& ctx) {
  // act(gate) * up, element-wise over rows of n; SwiGLU and GeGLU have fused kernels
  const Glu g = Glu(node.params[0]);
  const BinaryFn fused = g == Glu::SWIGLU ? ctx.k.swiglu : g == Glu::GEGLU ? ctx.k.geglu : nullptr;
  const UnaryFn act = unary_fn(ctx.k, glu_activation(g));
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    const float *gate = frow(*node.src[0], r), *up = frow(*node.src[1], r);
    if (fused) {
      fused(node.ne[0], gate, up, y);
    } else {
      act(node.ne[0], gate, y);
      ctx.k.mul(node.ne[0], y, up, y);
    }
  });
}

}  // namespace

OpImpl impl_binary() { return {compute_binary, nullptr, nullptr}; }
OpImpl impl_scale() { return {compute_scale, nullptr, nullptr}; }
OpImpl impl_clamp() { return {compute_clamp, nullptr, nullptr}; }
OpImpl impl_unary() { return {compute_unary, nullptr, nullptr}; }
OpImpl impl_glu() { return {compute_glu, nullptr, nullptr}; }

}  // namespace hart::cpu
