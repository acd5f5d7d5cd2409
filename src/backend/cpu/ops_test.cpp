// Every op on the CPU backend (the kernel set in use) against naive double-precision
// references on random data: odd sizes, strided views, broadcasting, 1 and 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/op_test_util.h"
#include "backend/cpu/schedule.h"
#include "common/error.h"
#include "quant/quant.h"
#include "testing/dense.h"

namespace hart::cpu::test {
namespace {

using testing::Dense;
using testing::read;

using Shape = std::array<int64_t, 4>;

Shape shape(const Tensor* t) { return {t->ne[0], t->ne[1], t->ne[2], t->ne[3]}; }

// want(i0, i1, i2, i3) for every element of a tensor shaped like t.
Dense tabulate(const Tensor* t, const std::function<double(int64_t, int64_t, int64_t, int64_t)>& f) {
  Dense d(shape(t));
  for (int64_t i3 = 0; i3 < d.ne[3]; i3++)
    for (int64_t i2 = 0; i2 < d.ne[2]; i2++)
      for (int64_t i1 = 0; i1 < d.ne[1]; i1++)
        for (int64_t i0 = 0; i0 < d.ne[0]; i0++) d.at(i0, i1, i2, i3) = f(i0, i1, i2, i3);
  return d;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

std::vector<std::string> ref_and_best() {
  const std::string best = available_kernels().back()->name;
  if (best == "ref") return {best};
  return {"ref", best};
}

// (threads, kernel set): the reference set and the best one this CPU runs.
class Ops : public ::testing::TestWithParam<std::tuple<int, std::string>> {
 protected:
  void SetUp() override { select_kernels(std::get<1>(GetParam())); }
  void TearDown() override { select_kernels(available_kernels().back()->name); }
  int threads() const { return std::get<0>(GetParam()); }
  Bench b;
};

TEST_P(Ops, GetRowsOfEveryKindOfTable) {
  for (Type t : {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0}) {
    const int64_t n = type_info(t).quantized ? 64 : 33;
    Tensor* table = b.random(t, {n, 9, 2});
    Tensor* ids = b.random(Type::I32, {5, 2}, 0, 9);
    Tensor* y = get_rows(b.ctx, table, ids);
    b.run({y}, threads());
    const Dense tab = read(*table), id = read(*ids);
    expect_near(read(*y), tabulate(y, [&](int64_t i0, int64_t i1, int64_t i2, int64_t) {
                  return tab.at(i0, int64_t(id.at(i1, i2)), i2);
                }), 0.0);
  }
}

TEST_P(Ops, SetRowsConvertsIntoTheDestination) {
  // Short rows, and rows of two whole chunks of the threads' split (16384) and a part of one.
  for (auto [t, n] : {std::pair{Type::F32, 33}, {Type::F16, 33}, {Type::Q8_0, 64}, {Type::F32, 32864},
                      {Type::F16, 32864}, {Type::Q8_0, 32864}}) {
    Tensor* dst = b.random(t, {n, 11});
    const Dense before = read(*dst);
    Tensor* src = b.random(Type::F32, {n, 3});
    Tensor* ids = b.ctx.new_tensor(Type::I64, {3});
    const int64_t rows[] = {7, 0, 10};
    ids->data = const_cast<int64_t*>(rows);
    Tensor* out = set_rows(b.ctx, dst, src, ids);
    b.run({out}, threads());
    const Dense s = read(*src);
    const double tol = t == Type::F32 ? 0.0 : t == Type::F16 ? 1e-3 : 1.0 / 127;
    expect_near(read(*dst), tabulate(dst, [&](int64_t i0, int64_t i1, int64_t, int64_t) {
                  for (int j = 0; j < 3; j++)
                    if (rows[j] == i1) return s.at(i0, j);
                  return before.at(i0, i1);
                }), tol);
  }
}

TEST_P(Ops, SetRowsWithBatchedI32Ids) {
  // dst [n, rows, 4], src [n, m, 4], ids [m, 2]: plane i2 uses ids(:, i2 % 2)
  Tensor* dst = b.random(Type::F32, {7, 6, 4});
  const Dense before = read(*dst);
  Tensor* src = b.random(Type::F32, {7, 2, 4});
  Tensor* ids = b.ctx.new_tensor(Type::I32, {2, 2});
  const int32_t rows[] = {5, 1, 0, 3};
  ids->data = const_cast<int32_t*>(rows);
  b.run({set_rows(b.ctx, dst, src, ids)}, threads());
  const Dense s = read(*src);
  expect_near(read(*dst), tabulate(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t) {
                for (int j = 0; j < 2; j++)
                  if (rows[(i2 % 2) * 2 + j] == i1) return s.at(i0, j, i2);
                return before.at(i0, i1, i2);
              }), 0.0);
}

TEST_P(Ops, CpyConvertsTypesAndLayouts) {
  struct Case {
    Type from, to;
    double tol;
  };
  for (Case c : {Case{Type::F32, Type::F16, 1e-3}, Case{Type::F16, Type::F32, 0.0},
                 Case{Type::F32, Type::BF16, 8e-3}, Case{Type::BF16, Type::F16, 1e-3},
                 Case{Type::F32, Type::Q8_0, 1.0 / 127}, Case{Type::Q8_0, Type::F32, 0.0}}) {
    const int64_t n = c.to == Type::Q8_0 || c.from == Type::Q8_0 ? 96 : 65;
    Tensor* src = b.random(c.from, {n, 3, 2});
    Tensor* dst = b.random(c.to, {n, 3, 2});
    Tensor* out = cpy(b.ctx, src, dst);
    b.run({out}, threads());
    expect_near(read(*dst), read(*src), c.tol);
  }
  // A transposed source into a differently shaped F16 destination, element by element.
  Tensor* src = b.random(Type::F32, {5, 7});
  Tensor* dst = b.random(Type::F16, {35});
  Tensor* tr = transpose(b.ctx, src);  // [7, 5]
  b.run({cpy(b.ctx, tr, dst)}, threads());
  const Dense s = read(*src);
  expect_near(read(*dst), tabulate(dst, [&](int64_t i, int64_t, int64_t, int64_t) { return s.at(i / 7, i % 7); }),
              1e-3);
}

// The element path copies runs that are contiguous on both sides: a transposed single column
// (one run: Qwen 3.5's causal convolution input at decode), and strided views whose runs differ
// (rows of 6 into rows of 4: runs of gcd 2), same type and converted.
TEST_P(Ops, CopyRunsOfStridedViews) {
  Tensor* col = b.random(Type::F32, {37, 1, 2});
  Tensor* y = cont(b.ctx, transpose(b.ctx, col));  // [1, 37, 2]
  b.run({y}, threads());
  const Dense c = read(*col);
  expect_near(read(*y), tabulate(y, [&](int64_t, int64_t i1, int64_t i2, int64_t) { return c.at(i1, 0, i2); }), 0.0);

  for (Type to : {Type::F32, Type::F16}) {
    Tensor* base = b.random(Type::F32, {8, 4, 3});
    Tensor* src = view(b.ctx, base, {6, 4, 3}, {base->nb[1], base->nb[2]}, sizeof(float));  // rows of 6 of 8
    Tensor* wide = b.random(to, {5, 18});
    Tensor* dst = view(b.ctx, wide, {4, 18}, {wide->nb[1]}, 0);  // rows of 4 of 5
    b.run({cpy(b.ctx, src, dst)}, threads());
    const Dense s = read(*src);
    expect_near(read(*dst), tabulate(dst, [&](int64_t i0, int64_t i1, int64_t, int64_t) {
                  const int64_t i = i1 * 4 + i0;  // flattened order
                  return s.at(i % 6, i / 6 % 4, i / 24);
                }), to == Type::F32 ? 0.0 : 1e-3);
  }
}

TEST_P(Ops, ContOfPermutedView) {
  Tensor* a = b.random(Type::F32, {7, 3, 5, 2});
  Tensor* p = permute(b.ctx, a, 2, 0, 3, 1);  // [3, 2, 7, 5]
  Tensor* y = cont(b.ctx, p);
  b.run({y}, threads());
  EXPECT_TRUE(y->is_contiguous());
  expect_near(read(*y), read(*p), 0.0);
}

TEST_P(Ops, BinaryOpsBroadcast) {
  // Short rows of b repeat along a's rows, in runs of whole copies and a partial last run (the
  // op tiles b's row 256 floats at a time: 1029 = 3 * 343 = 7 * 147).
  const std::pair<Shape, std::vector<Shape>> cases[] = {
      {{33, 7, 3, 2}, {{33, 7, 3, 2}, {33, 1, 3, 1}, {1, 7, 1, 1}, {11, 7, 1, 2}, {1, 1, 1, 1}}},
      {{1029, 2, 3, 1}, {{1, 2, 3, 1}, {3, 1, 3, 1}, {7, 2, 1, 1}, {1029, 2, 1, 1}}}};
  using Builder = Tensor* (*)(Context&, Tensor*, Tensor*);
  const std::pair<Builder, double (*)(double, double)> ops[] = {
      {add, [](double x, double y) { return x + y; }},
      {sub, [](double x, double y) { return x - y; }},
      {mul, [](double x, double y) { return x * y; }}};
  for (const auto& [a_shape, b_shapes] : cases) {
    for (const Shape& bs : b_shapes)
      for (auto [op, f] : ops) {
        Tensor* x = b.random(Type::F32, {a_shape[0], a_shape[1], a_shape[2], a_shape[3]});
        Tensor* y = b.random(Type::F32, {bs[0], bs[1], bs[2], bs[3]});
        Tensor* z = op(b.ctx, x, y);
        b.run({z}, threads());
        const Dense dx = read(*x), dy = read(*y);
        expect_near(read(*z), tabulate(z, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                      return f(dx.at(i0, i1, i2, i3), dy.at(i0 % bs[0], i1 % bs[1], i2 % bs[2], i3 % bs[3]));
                    }), 1e-6);
      }
  }
}

// ggml's remaining element-wise unaries, the GLU kinds built on them, and SCALE's bias, each
// against its definition in double.
TEST_P(Ops, GgmlUnariesGluKindsAndScaleBias) {
  Tensor* x = b.random(Type::F32, {37, 3}, -6.0f, 6.0f);
  Tensor* g = b.random(Type::F32, {37, 3});
  const Dense dx = read(*x), dg = read(*g);
  using Ref = double (*)(double);
  const std::pair<Unary, Ref> unaries[] = {
      {Unary::ABS, [](double v) { return std::fabs(v); }},
      {Unary::SGN, [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }},
      {Unary::STEP, [](double v) { return v > 0 ? 1.0 : 0.0; }},
      {Unary::ELU, [](double v) { return v > 0 ? v : std::expm1(v); }},
      {Unary::GELU_QUICK, [](double v) { return v / (1.0 + std::exp(-1.702 * v)); }},
      {Unary::HARDSWISH, [](double v) { return v * std::clamp((v + 3) / 6, 0.0, 1.0); }},
      {Unary::HARDSIGMOID, [](double v) { return std::clamp((v + 3) / 6, 0.0, 1.0); }},
      {Unary::EXPM1, [](double v) { return std::expm1(v); }},
      {Unary::GELU_ERF, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }},
      {Unary::FLOOR, [](double v) { return std::floor(v); }},
      {Unary::CEIL, [](double v) { return std::ceil(v); }},
      {Unary::ROUND, [](double v) { return std::round(v); }},
      {Unary::TRUNC, [](double v) { return std::trunc(v); }},
      {Unary::SQR, [](double v) { return v * v; }}};
  const std::pair<Glu, Ref> glus[] = {{Glu::REGLU, [](double v) { return std::max(v, 0.0); }},
                                      {Glu::GEGLU_ERF, unaries[8].second},
                                      {Glu::GEGLU_QUICK, unaries[4].second}};
  std::vector<Tensor*> outs;
  for (const auto& [u, ref] : unaries) outs.push_back(unary(b.ctx, x, u));
  for (const auto& [kind, ref] : glus) outs.push_back(glu(b.ctx, x, g, kind));
  Tensor* biased = scale(b.ctx, x, -0.5f, 0.25f);
  outs.push_back(biased);
  b.run(outs, threads());
  size_t o = 0;
  for (const auto& [u, ref] : unaries) {
    SCOPED_TRACE(unary_name(u));
    expect_near(read(*outs[o]), tabulate(outs[o], [&](int64_t i, int64_t r, int64_t, int64_t) { return ref(dx.at(i, r)); }),
                1e-5, 1e-5);
    o++;
  }
  for (const auto& [kind, ref] : glus) {
    SCOPED_TRACE(glu_name(kind));
    expect_near(read(*outs[o]), tabulate(outs[o], [&](int64_t i, int64_t r, int64_t, int64_t) {
                  return ref(dx.at(i, r)) * dg.at(i, r);
                }), 1e-5, 1e-5);
    o++;
  }
  expect_near(read(*biased), tabulate(biased, [&](int64_t i, int64_t r, int64_t, int64_t) { return -0.5 * dx.at(i, r) + 0.25; }),
              1e-6);
}

TEST_P(Ops, RowOpsOnStridedViews) {
  // A view that skips every other row: rows are contiguous, the row stride is not.
  Tensor* base = b.random(Type::F32, {257, 10}, -3.0f, 3.0f);
  Tensor* x = view(b.ctx, base, {257, 5}, {2 * 257 * 4}, 257 * 4);
  Tensor* g = b.random(Type::F32, {257, 5});
  const Dense dx = read(*x), dg = read(*g);
  Tensor* sc = scale(b.ctx, x, -0.75f);
  Tensor* norm = rms_norm(b.ctx, x, 1e-5f);
  Tensor* un[8];
  const Unary kinds[] = {Unary::SILU, Unary::GELU, Unary::RELU,    Unary::NEG,
                         Unary::EXP,  Unary::TANH, Unary::SIGMOID, Unary::SOFTPLUS};
  for (int i = 0; i < 8; i++) un[i] = unary(b.ctx, x, kinds[i]);
  Tensor* sw = glu(b.ctx, x, g, Glu::SWIGLU);
  Tensor* ge = glu(b.ctx, x, g, Glu::GEGLU);
  Tensor* ln = hart::norm(b.ctx, x, 1e-5f);
  Tensor* l2 = l2_norm(b.ctx, x, 1e-12f);
  Tensor* sums = sum_rows(b.ctx, x);
  b.run({sc, norm, un[0], un[1], un[2], un[3], un[4], un[5], un[6], un[7], sw, ge, ln, l2, sums}, threads());

  expect_near(read(*sc), tabulate(sc, [&](int64_t i, int64_t r, int64_t, int64_t) { return -0.75 * dx.at(i, r); }), 1e-6);
  expect_near(read(*norm), tabulate(norm, [&](int64_t i, int64_t r, int64_t, int64_t) {
                double ss = 0.0;
                for (int64_t j = 0; j < 257; j++) ss += dx.at(j, r) * dx.at(j, r);
                return dx.at(i, r) / std::sqrt(ss / 257 + 1e-5);
              }), 1e-5, 1e-5);
  double (*const refs[])(double) = {silu, gelu, [](double v) { return std::max(v, 0.0); },
                                    [](double v) { return -v; }, [](double v) { return std::exp(v); },
                                    [](double v) { return std::tanh(v); },
                                    [](double v) { return 1.0 / (1.0 + std::exp(-v)); },
                                    [](double v) { return std::log1p(std::exp(v)); }};
  for (int k = 0; k < 8; k++)
    expect_near(read(*un[k]), tabulate(un[k], [&](int64_t i, int64_t r, int64_t, int64_t) { return refs[k](dx.at(i, r)); }),
                1e-5, 1e-5);
  auto row_sum = [&](int64_t r, auto f) {
    double s = 0.0;
    for (int64_t j = 0; j < 257; j++) s += f(dx.at(j, r));
    return s;
  };
  expect_near(read(*ln), tabulate(ln, [&](int64_t i, int64_t r, int64_t, int64_t) {
                const double mean = row_sum(r, [](double v) { return v; }) / 257;
                const double var = row_sum(r, [&](double v) { return (v - mean) * (v - mean); }) / 257;
                return (dx.at(i, r) - mean) / std::sqrt(var + 1e-5);
              }), 1e-5, 1e-5);
  expect_near(read(*l2), tabulate(l2, [&](int64_t i, int64_t r, int64_t, int64_t) {
                return dx.at(i, r) / std::sqrt(row_sum(r, [](double v) { return v * v; }));
              }), 1e-6, 1e-5);
  ASSERT_EQ(sums->ne[0], 1);
  expect_near(read(*sums), tabulate(sums, [&](int64_t, int64_t r, int64_t, int64_t) {
                return row_sum(r, [](double v) { return v; });
              }), 1e-4, 1e-5);
  expect_near(read(*sw), tabulate(sw, [&](int64_t i, int64_t r, int64_t, int64_t) { return silu(dx.at(i, r)) * dg.at(i, r); }),
              1e-5, 1e-5);
  expect_near(read(*ge), tabulate(ge, [&](int64_t i, int64_t r, int64_t, int64_t) { return gelu(dx.at(i, r)) * dg.at(i, r); }),
              1e-5, 1e-5);
}

TEST_P(Ops, SoftMaxWithMaskAndScale) {
  Tensor* x = b.random(Type::F32, {33, 4, 3}, -4.0f, 4.0f);
  Tensor* mask = b.random(Type::F32, {33, 6}, -1.0f, 1.0f);
  float* m = static_cast<float*>(mask->data);
  for (int64_t r = 0; r < 6; r++)
    for (int64_t i = 0; i < 33; i++)
      if (i > 20 + r || r == 2) m[r * 33 + i] = -INFINITY;  // row 2 fully masked
  Tensor* y = soft_max(b.ctx, x, mask, 0.6f, 0.0f);
  Tensor* plain = soft_max(b.ctx, x, nullptr, 1.0f, 0.0f);
  b.run({y, plain}, threads());
  const Dense dx = read(*x), dm = read(*mask);
  auto ref = [&](bool masked, double s) {
    return [&, masked, s](int64_t i, int64_t r, int64_t p, int64_t) {
      double mx = -INFINITY, sum = 0.0;
      auto logit = [&](int64_t j) { return dx.at(j, r, p) * s + (masked ? dm.at(j, r) : 0.0); };
      for (int64_t j = 0; j < 33; j++) mx = std::max(mx, logit(j));
      if (mx == -INFINITY) return 0.0;
      for (int64_t j = 0; j < 33; j++) sum += std::exp(logit(j) - mx);
      return std::exp(logit(i) - mx) / sum;
    };
  };
  expect_near(read(*y), tabulate(y, ref(true, 0.6)), 1e-6, 1e-5);
  expect_near(read(*plain), tabulate(plain, ref(false, 1.0)), 1e-6, 1e-5);
}

// ggml_soft_max_ext's ALiBi (5 heads: 4 take m0's powers, the fifth m1's) over an F16 mask, and
// gpt-oss's sinks: one more logit per head in the max and the denominator.
TEST_P(Ops, SoftMaxAlibiF16MaskAndSinks) {
  const int64_t n = 19, rows = 3, heads = 5;
  const float max_bias = 8.0f;
  Tensor* x = b.random(Type::F32, {n, rows, heads}, -4.0f, 4.0f);
  Tensor* mask = b.random(Type::F16, {n, rows}, -2.0f, 0.0f);
  Tensor* sinks = b.random(Type::F32, {heads}, -3.0f, 3.0f);
  Tensor* y = soft_max(b.ctx, x, mask, 0.7f, max_bias, sinks);
  b.run({y}, threads());
  const Dense dx = read(*x), dm = read(*mask), ds = read(*sinks);
  const double m0 = std::pow(2.0, -max_bias / 4), m1 = std::pow(2.0, -max_bias / 8);
  expect_near(read(*y), tabulate(y, [&](int64_t i, int64_t r, int64_t h, int64_t) {
                const double slope = h < 4 ? std::pow(m0, h + 1) : std::pow(m1, 2 * (h - 4) + 1);
                auto logit = [&](int64_t j) { return dx.at(j, r, h) * 0.7 + slope * dm.at(j, r); };
                double mx = ds.at(h);
                for (int64_t j = 0; j < n; j++) mx = std::max(mx, logit(j));
                double sum = std::exp(ds.at(h) - mx);
                for (int64_t j = 0; j < n; j++) sum += std::exp(logit(j) - mx);
                return std::exp(logit(i) - mx) / sum;
              }),
              1e-6, 1e-5);
}

TEST_P(Ops, RopeNormalAndNeox) {
  for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX})
    for (bool factors : {false, true}) {
      // x is a strided view: heads of 20 floats inside rows of 24
      Tensor* base = b.random(Type::F32, {24, 3, 5});
      Tensor* x = view(b.ctx, base, {20, 3, 5}, {24 * 4, 24 * 3 * 4}, 4);
      Tensor* pos = b.random(Type::I32, {5}, 0, 3000);
      Tensor* ff = factors ? b.random(Type::F32, {8}, 1.0f, 8.0f) : nullptr;
      const int n_dims = 16;
      const double base_f = 10000.0, scale_f = 0.5, mscale = factors ? 1.25 : 1.0;
      Tensor* y = rope(b.ctx, x, pos, ff, mode, n_dims, float(base_f), float(scale_f), float(mscale));
      b.run({y}, threads());
      const Dense dx = read(*x), dp = read(*pos);
      const Dense df = ff ? read(*ff) : Dense();
      expect_near(read(*y), tabulate(y, [&](int64_t i0, int64_t h, int64_t t, int64_t) {
                    if (i0 >= n_dims) return dx.at(i0, h, t);
                    const bool neox = mode == RopeMode::NEOX;
                    const int64_t pair = neox ? i0 % (n_dims / 2) : i0 / 2;
                    const int64_t a = neox ? pair : 2 * pair, c = neox ? pair + n_dims / 2 : 2 * pair + 1;
                    const double theta = dp.at(t) * scale_f * std::pow(base_f, -2.0 * double(pair) / n_dims) /
                                         (ff ? df.at(pair) : 1.0);
                    const double x0 = dx.at(a, h, t), x1 = dx.at(c, h, t);
                    return mscale * (i0 == a ? x0 * std::cos(theta) - x1 * std::sin(theta)
                                             : x0 * std::sin(theta) + x1 * std::cos(theta));
                  }), 2e-4);
    }
}

// YaRN (a 4k-trained model stretched 8x): the pairs between the beta_fast and beta_slow
// wavelengths ramp from the extrapolated angle to the interpolated one; cos and sin scale by
// 1 + 0.1 ln 8. The ramp's ends as ggml_rope_yarn_corr_dims computes them.
TEST_P(Ops, RopeYarn) {
  const int n_dims = 64, n_ctx_orig = 4096;
  const double base_f = 10000.0, scale_f = 0.125, ext = 1.0, beta_fast = 32.0, beta_slow = 1.0;
  Tensor* x = b.random(Type::F32, {n_dims, 2, 3});
  Tensor* pos = b.random(Type::I32, {3}, 0, 30000);
  Tensor* y = rope(b.ctx, x, pos, nullptr, RopeMode::NEOX, n_dims, float(base_f), float(scale_f), 1.0f,
                   {float(ext), n_ctx_orig, float(beta_fast), float(beta_slow)});
  b.run({y}, threads());
  auto corr = [&](double rot) { return n_dims * std::log(n_ctx_orig / (rot * 2 * M_PI)) / (2 * std::log(base_f)); };
  const double lo = std::max(0.0, std::floor(corr(beta_fast))), hi = std::min(n_dims - 1.0, std::ceil(corr(beta_slow)));
  ASSERT_LT(lo, hi);  // the ramp spans pairs: some angles mix
  const double mscale = 1.0 + 0.1 * std::log(1.0 / scale_f);
  const Dense dx = read(*x), dp = read(*pos);
  expect_near(read(*y), tabulate(y, [&](int64_t i0, int64_t h, int64_t t, int64_t) {
                const int64_t pair = i0 % (n_dims / 2), a = pair, c = pair + n_dims / 2;
                const double extrap = dp.at(t) * std::pow(base_f, -2.0 * double(pair) / n_dims);
                const double mix = ext * (1.0 - std::clamp((pair - lo) / std::max(0.001, hi - lo), 0.0, 1.0));
                const double theta = scale_f * extrap * (1.0 - mix) + extrap * mix;
                const double x0 = dx.at(a, h, t), x1 = dx.at(c, h, t);
                return mscale * (i0 == a ? x0 * std::cos(theta) - x1 * std::sin(theta)
                                         : x0 * std::sin(theta) + x1 * std::cos(theta));
              }),
              2e-3);
}

TEST_P(Ops, ConcatAlongEveryDim) {
  for (int dim = 0; dim < 4; dim++) {
    int64_t na[4] = {7, 3, 2, 2}, nb[4] = {7, 3, 2, 2};
    nb[dim] = 5;
    // a is a strided view (every other row of a wider base), b contiguous
    Tensor* base = b.random(Type::F32, {na[0], 2 * na[1], na[2], na[3]});
    Tensor* a = view(b.ctx, base, {na[0], na[1], na[2], na[3]}, {base->nb[1] * 2, base->nb[2], base->nb[3]}, 0);
    Tensor* c = b.random(Type::F32, {nb[0], nb[1], nb[2], nb[3]});
    Tensor* y = concat(b.ctx, a, c, dim);
    b.run({y}, threads());
    const Dense da = read(*a), dc = read(*c);
    expect_near(read(*y), tabulate(y, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                  int64_t i[4] = {i0, i1, i2, i3};
                  if (i[dim] < na[dim]) return da.at(i[0], i[1], i[2], i[3]);
                  i[dim] -= na[dim];
                  return dc.at(i[0], i[1], i[2], i[3]);
                }), 0.0);
  }
  EXPECT_THROW(concat(b.ctx, b.random(Type::F32, {4, 3}), b.random(Type::F32, {4, 2}), 0), Error);
}

TEST_P(Ops, SsmConvIsACausalDepthwiseConvolution) {
  for (int64_t k : {2, 4}) {
    const int64_t channels = 37, n_t = 9, n_s = 3;
    Tensor* sx = b.random(Type::F32, {k - 1 + n_t, channels, n_s});
    Tensor* w = b.random(Type::F32, {k, channels});
    Tensor* y = ssm_conv(b.ctx, sx, w);
    ASSERT_EQ(shape(y), (Shape{channels, n_t, n_s, 1}));
    b.run({y}, threads());
    const Dense dx = read(*sx), dw = read(*w);
    expect_near(read(*y), tabulate(y, [&](int64_t c, int64_t t, int64_t s, int64_t) {
                  double sum = 0;
                  for (int64_t i = 0; i < k; i++) sum += dx.at(t + i, c, s) * dw.at(i, c);
                  return sum;
                }), 1e-5);
  }
  EXPECT_THROW(ssm_conv(b.ctx, b.random(Type::F32, {3, 8, 1}), b.random(Type::F32, {4, 8})), Error);
}

// The gated delta rule against its formula, token by token from the given states, with fewer key
// heads than value heads and q, k, v as strided views (as the model takes them from one row).
TEST_P(Ops, GatedDeltaNetFollowsTheRule) {
  const int64_t S = 19, H = 4, H_k = 2, n_s = 2, per_seq = 3, T = n_s * per_seq, row = 2 * S * H_k + S * H + 5;
  Tensor* mixed = b.random(Type::F32, {row, T}, -1.0f, 1.0f);
  const size_t e = sizeof(float);
  Tensor* q = view(b.ctx, mixed, {S, H_k, T}, {S * e, mixed->nb[1]}, 0);
  Tensor* k = view(b.ctx, mixed, {S, H_k, T}, {S * e, mixed->nb[1]}, S * H_k * e);
  Tensor* v = view(b.ctx, mixed, {S, H, T}, {S * e, mixed->nb[1]}, 2 * S * H_k * e);
  Tensor* g = b.random(Type::F32, {H, T}, -2.0f, 0.0f);  // log-decays
  Tensor* beta = b.random(Type::F32, {1, H, T}, 0.0f, 1.0f);
  Tensor* state = b.random(Type::F32, {S * S * H, n_s});
  Tensor* y = gated_delta_net(b.ctx, q, k, v, g, beta, state);
  ASSERT_EQ(shape(y), (Shape{S * H, T + S * n_s, 1, 1}));
  b.run({y}, threads());
  const Dense dq = read(*q), dk = read(*k), dv = read(*v), dg = read(*g), db = read(*beta), st0 = read(*state),
              got = read(*y);
  for (int64_t seq = 0; seq < n_s; seq++)
    for (int64_t h = 0; h < H; h++) {
      std::vector<double> s(size_t(S * S));
      for (int64_t i = 0; i < S * S; i++) s[size_t(i)] = st0.at(h * S * S + i, seq);
      for (int64_t t = seq * per_seq; t < (seq + 1) * per_seq; t++) {
        const double decay = std::exp(dg.at(h, t)), bt = db.at(0, h, t);
        for (double& x : s) x *= decay;
        for (int64_t i = 0; i < S; i++) {
          double sk = 0.0, out = 0.0;
          for (int64_t j = 0; j < S; j++) sk += s[size_t(i * S + j)] * dk.at(j, h % H_k, t);
          const double d = bt * (dv.at(i, h, t) - sk);
          for (int64_t j = 0; j < S; j++) {
            s[size_t(i * S + j)] += d * dk.at(j, h % H_k, t);
            out += s[size_t(i * S + j)] * dq.at(j, h % H_k, t);
          }
          out /= std::sqrt(double(S));
          ASSERT_NEAR(got.at(h * S + i, t), out, 1e-4 * (1 + std::fabs(out))) << "token " << t << " head " << h;
        }
      }
      for (int64_t i = 0; i < S * S; i++)  // the final state, after the output columns
        ASSERT_NEAR(got.at((h * S * S + i) % (S * H), T + seq * S + (h * S * S + i) / (S * H)), s[size_t(i)], 1e-4);
    }
  EXPECT_THROW(gated_delta_net(b.ctx, q, k, b.random(Type::F32, {S, 3, T}), g, beta, state), Error);  // 3 % 2 heads
}

// RWKV-7's WKV recurrence against the formula, token by token from the given states, for
// sequences of several tokens (the state carried within a sequence, not across).
TEST_P(Ops, RwkvWkv7FollowsTheRecurrence) {
  const int64_t S = 19, H = 3, n_s = 2, per_seq = 4, T = n_s * per_seq;
  Tensor* in[6];
  for (int i = 0; i < 6; i++) in[i] = b.random(Type::F32, {S, H, T}, i == 1 ? 0.0f : -1.0f, 1.0f);  // w in [0, 1)
  Tensor* state = b.random(Type::F32, {S * S * H, n_s});
  Tensor* y = rwkv_wkv7(b.ctx, in[0], in[1], in[2], in[3], in[4], in[5], state);
  ASSERT_EQ(shape(y), (Shape{S * H, T + S * n_s, 1, 1}));
  b.run({y}, threads());
  Dense d[6];
  for (int i = 0; i < 6; i++) d[i] = read(*in[i]);
  const auto& [r, w, k, v, a, bb] = d;
  const Dense st0 = read(*state), got = read(*y);
  for (int64_t seq = 0; seq < n_s; seq++)
    for (int64_t h = 0; h < H; h++) {
      std::vector<double> s(size_t(S * S));
      for (int64_t e = 0; e < S * S; e++) s[size_t(e)] = st0.at(h * S * S + e, seq);
      for (int64_t t = seq * per_seq; t < (seq + 1) * per_seq; t++)
        for (int64_t i = 0; i < S; i++) {
          double sa = 0.0, out = 0.0;
          for (int64_t j = 0; j < S; j++) sa += a.at(j, h, t) * s[size_t(i * S + j)];
          for (int64_t j = 0; j < S; j++) {
            double& x = s[size_t(i * S + j)];
            x = x * w.at(j, h, t) + v.at(i, h, t) * k.at(j, h, t) + sa * bb.at(j, h, t);
            out += x * r.at(j, h, t);
          }
          ASSERT_NEAR(got.at(h * S + i, t), out, 1e-4 * (1 + std::fabs(out))) << "token " << t << " head " << h;
        }
      for (int64_t e = 0; e < S * S; e++)  // the final state, after the output columns
        ASSERT_NEAR(got.at((h * S * S + e) % (S * H), T + seq * S + (h * S * S + e) / (S * H)), s[size_t(e)], 1e-4);
    }
}

// Both recurrent ops read their initial states from a store's cells (I32 per sequence) exactly as
// from a GET_ROWS of those cells: two sequences may read one cell (a shared snapshot). A cell
// outside the store is an error.
TEST_P(Ops, RecurrentOpsReadTheStoresCells) {
  const int64_t S = 7, H = 2, n_s = 3, T = 2 * n_s;
  Tensor* store = b.random(Type::F32, {S * S * H, 5});
  Tensor* cells = b.ctx.new_tensor(Type::I32, {n_s});
  int32_t picked[] = {3, 0, 3};
  cells->data = picked;
  Tensor* in[6];
  for (int i = 0; i < 6; i++) in[i] = b.random(Type::F32, {S, H, T}, i == 1 ? 0.0f : -1.0f, 1.0f);
  Tensor* g = b.random(Type::F32, {H, T}, -2.0f, 0.0f);
  Tensor* beta = b.random(Type::F32, {H, T}, 0.0f, 1.0f);
  auto gdn = [&](Tensor* state, Tensor* c) { return gated_delta_net(b.ctx, in[0], in[1], in[2], g, beta, state, c); };
  auto wkv = [&](Tensor* state, Tensor* c) {
    return rwkv_wkv7(b.ctx, in[0], in[1], in[2], in[3], in[4], in[5], state, c);
  };
  Tensor* from_cells[2] = {gdn(store, cells), wkv(store, cells)};
  Tensor* from_rows[2] = {gdn(get_rows(b.ctx, store, cells), nullptr), wkv(get_rows(b.ctx, store, cells), nullptr)};
  b.run({from_cells[0], from_cells[1], from_rows[0], from_rows[1]}, threads());
  for (int i = 0; i < 2; i++) expect_near(read(*from_cells[i]), read(*from_rows[i]), 0.0);
  picked[1] = 5;
  try {
    b.run({gdn(store, cells)}, threads());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("state cell 5 is outside 0..4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gdn(store, b.random(Type::F32, {n_s})), Error);  // cells must be I32
}

// Reference X·Wᵀ with W's batch dims broadcast over X's.
Dense mul_mat_ref(const Tensor* w, const Tensor* x, const Tensor* y) {
  const Dense dw = read(*w), dx = read(*x);
  const int64_t r2 = x->ne[2] / w->ne[2], r3 = x->ne[3] / w->ne[3];
  return tabulate(y, [&](int64_t n, int64_t m, int64_t i2, int64_t i3) {
    double s = 0.0;
    for (int64_t k = 0; k < x->ne[0]; k++) s += dw.at(k, n, i2 / r2, i3 / r3) * dx.at(k, m, i2, i3);
    return s;
  });
}

// Tolerance: exact-ish for F32 activations, quantization noise when the kernel set quantizes
// activations (|x| <= 1, |w| <= 1: each product is off by at most ~1/127 of the block's max).
double mul_mat_tol(Type wt, int64_t k) {
  const Type act = kernels().dot[size_t(wt)].act_type;
  if (act == Type::F32) return 1e-5 * double(k);
  return (type_info(act).quantized ? 1.0 / 100 : 1e-2) * double(k) / 4;
}

TEST_P(Ops, MulMatEveryWeightTypeAndShape) {
  for (Type t : {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::IQ4_NL, Type::Q2_K, Type::Q3_K,
                 Type::Q4_K, Type::Q6_K, Type::IQ4_XS, Type::TQ1_0, Type::TQ2_0, Type::MXFP4, Type::IQ2_XXS,
                 Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M, Type::Q1_0,
                 Type::Q2_0}) {
    if (!can_quantize(t)) continue;
    // One 256-block, three blocks of Q1_0's 128 or Q2_0's 64 or a 32-block type, 65 floats.
    const int64_t bs = type_info(t).block_size, k = bs == 1 ? 65 : bs == 256 ? 256 : 3 * bs;
    for (int64_t m : {1, 7, 19}) {
      Tensor* w = b.random(t, {k, 33});
      Tensor* x = b.random(Type::F32, {k, m});
      Tensor* y = mul_mat(b.ctx, w, x);
      b.run({y}, threads());
      SCOPED_TRACE(std::string(type_name(t)) + " m=" + std::to_string(m));
      expect_near(read(*y), mul_mat_ref(w, x, y), mul_mat_tol(t, k));
    }
  }
}

TEST_P(Ops, MulMatBroadcastAndStridedActivations) {
  // W [k, n, 2] over X [k, m, 6]; X as a transposed view (strided along k)
  Tensor* w = b.random(Type::F16, {40, 9, 2});
  Tensor* xt = b.random(Type::F32, {5, 40, 6});
  Tensor* x = permute(b.ctx, xt, 1, 0, 2, 3);  // [40, 5, 6], nb[0] = 20
  Tensor* y = mul_mat(b.ctx, w, x);
  Tensor* wq = b.random(Type::Q8_0, {64, 17});
  Tensor* xq = transpose(b.ctx, b.random(Type::F32, {3, 64}));
  Tensor* yq = mul_mat(b.ctx, wq, xq);
  b.run({y, yq}, threads());
  expect_near(read(*y), mul_mat_ref(w, x, y), mul_mat_tol(Type::F16, 40));
  expect_near(read(*yq), mul_mat_ref(wq, xq, yq), mul_mat_tol(Type::Q8_0, 64));
}

// F16 activations (llama.cpp's KQ over an F16 cache), contiguous and strided, against float and
// quantized weights.
TEST_P(Ops, MulMatF16Activations) {
  for (Type t : {Type::F32, Type::F16, Type::Q8_0}) {
    Tensor* w = b.random(t, {64, 13});
    Tensor* x = b.random(Type::F16, {64, 5});
    Tensor* xs = transpose(b.ctx, b.random(Type::F16, {3, 64}));
    Tensor* y = mul_mat(b.ctx, w, x);
    Tensor* ys = mul_mat(b.ctx, w, xs);
    b.run({y, ys}, threads());
    SCOPED_TRACE(type_name(t));
    expect_near(read(*y), mul_mat_ref(w, x, y), mul_mat_tol(t, 64));
    expect_near(read(*ys), mul_mat_ref(w, xs, ys), mul_mat_tol(t, 64));
  }
}

// softmax(q·k * scale + mask) · v per query head, in double.
Dense attention_ref(const Tensor* q, const Tensor* k, const Tensor* v, const Tensor* mask, float scale,
                    const Tensor* y) {
  const Dense dq = read(*q), dk = read(*k), dv = read(*v);
  const Dense dm = mask ? read(*mask) : Dense();
  const int64_t group = q->ne[1] / k->ne[1], n_kv = k->ne[2];
  return tabulate(y, [&](int64_t i, int64_t h, int64_t t, int64_t) {
    const int64_t kvh = h / group;
    std::vector<double> s(static_cast<size_t>(n_kv));
    double mx = -INFINITY;
    for (int64_t j = 0; j < n_kv; j++) {
      double dot = 0.0;
      for (int64_t c = 0; c < q->ne[0]; c++) dot += dq.at(c, h, t) * dk.at(c, kvh, j);
      s[size_t(j)] = dot * scale + (mask ? dm.at(j, t) : 0.0);
      mx = std::max(mx, s[size_t(j)]);
    }
    if (mx == -INFINITY) return 0.0;
    double num = 0.0, den = 0.0;
    for (int64_t j = 0; j < n_kv; j++) {
      const double p = std::exp(s[size_t(j)] - mx);
      num += p * dv.at(i, kvh, j);
      den += p;
    }
    return num / den;
  });
}

TEST_P(Ops, FlashAttentionOverStridedCache) {
  struct Case {
    Type kv;
    int64_t d, dv, n_head, n_head_kv, n_tok, n_kv;
    bool mask;
  };
  for (Case c : {Case{Type::F16, 40, 40, 6, 2, 5, 13, true}, Case{Type::F32, 33, 17, 4, 4, 3, 7, true},
                 Case{Type::F16, 64, 64, 8, 1, 1, 37, false}, Case{Type::BF16, 16, 16, 3, 1, 2, 5, true}}) {
    // K and V live in caches [d * n_head_kv, 50]; the op reads the first n_kv positions.
    Tensor* kc = b.random(c.kv, {c.d * c.n_head_kv, 50});
    Tensor* vc = b.random(c.kv, {c.dv * c.n_head_kv, 50});
    const size_t es = type_info(c.kv).type_size;
    Tensor* k = view(b.ctx, kc, {c.d, c.n_head_kv, c.n_kv}, {size_t(c.d) * es, kc->nb[1]}, 0);
    Tensor* v = view(b.ctx, vc, {c.dv, c.n_head_kv, c.n_kv}, {size_t(c.dv) * es, vc->nb[1]}, 0);
    Tensor* q = b.random(Type::F32, {c.d, c.n_head, c.n_tok});
    Tensor* mask = nullptr;
    if (c.mask) {  // causal over the last n_tok positions, plus one fully masked token
      mask = b.random(Type::F32, {c.n_kv, c.n_tok + 1}, -0.5f, 0.5f);
      float* m = static_cast<float*>(mask->data);
      for (int64_t t = 0; t < c.n_tok; t++)
        for (int64_t j = 0; j < c.n_kv; j++)
          if (j > c.n_kv - c.n_tok + t || (t == 1 && c.n_tok > 2)) m[t * c.n_kv + j] = -INFINITY;
    }
    const float scale = 1.0f / std::sqrt(float(c.d));
    Tensor* y = flash_attn_ext(b.ctx, q, k, v, mask, scale);
    b.run({y}, threads());
    SCOPED_TRACE(std::string(type_name(c.kv)) + " heads " + std::to_string(c.n_head) + "/" +
                 std::to_string(c.n_head_kv));
    const Type act = kernels().dot[size_t(c.kv)].act_type;
    expect_near(read(*y), attention_ref(q, k, v, mask, scale, y), act == Type::F32 ? 1e-5 : 5e-3);
  }
}

// A transformer-ish block over X (d, m): norm, SwiGLU feed-forward of width ff, residuals.
Tensor* ffn_block(Bench& b, int64_t d, int64_t m, int64_t ff, Type gate, Type up, Type down) {
  Tensor* x = b.random(Type::F32, {d, m});
  Tensor* wg = b.random(gate, {d, ff});
  Tensor* wu = b.random(up, {d, ff});
  Tensor* wd = b.random(down, {ff, d});
  Tensor* nw = b.random(Type::F32, {d});
  Tensor* h = mul(b.ctx, rms_norm(b.ctx, x, 1e-6f), nw);
  Tensor* act = glu(b.ctx, mul_mat(b.ctx, wg, h), mul_mat(b.ctx, wu, h), Glu::SWIGLU);
  Tensor* y = add(b.ctx, mul_mat(b.ctx, wd, act), x);
  return add(b.ctx, scale(b.ctx, y, 0.5f), h);
}

// Memory reuse must not change any result.
TEST_P(Ops, PlannedMemoryGivesTheSameResultsAsPrivateBuffers) {
  Bench ref_bench(7), planned(7);
  Tensor* ref_out = ffn_block(ref_bench, 64, 5, 96, Type::Q8_0, Type::Q8_0, Type::F16);
  Tensor* out = ffn_block(planned, 64, 5, 96, Type::Q8_0, Type::Q8_0, Type::F16);
  ref_bench.run_without_reuse({ref_out}, threads());
  planned.run({out}, threads());
  expect_near(read(*out), read(*ref_out), 0.0);
}

// The same block with nodes big enough to be split over the threads (see schedule.h): prefill
// (MUL_MAT converts X once, shared, behind a barrier) and decode-sized X (each piece converts
// privately), with independent nodes running without waits between them. Splitting changes no
// summation order, so the results equal a single thread's bit for bit.
TEST_P(Ops, SplitNodesGiveTheSameResultsAsPrivateBuffers) {
  for (int64_t m : {80, 3}) {
    Bench ref_bench(11), planned(11);
    Tensor* ref_out = ffn_block(ref_bench, 256, m, 320, Type::Q8_0, Type::Q4_0, Type::F16);
    Tensor* out = ffn_block(planned, 256, m, 320, Type::Q8_0, Type::Q4_0, Type::F16);
    ref_bench.run_without_reuse({ref_out}, 1);  // one thread: nothing can race
    planned.run({out}, threads());
    SCOPED_TRACE("m=" + std::to_string(m));
    expect_near(read(*out), read(*ref_out), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Ops,
                         ::testing::Combine(::testing::Values(1, 3),
                                            ::testing::ValuesIn(ref_and_best())),
                         [](const auto& info) {
                           return std::get<1>(info.param) + "_" + std::to_string(std::get<0>(info.param)) + "threads";
                         });

// A decode step of a recurrent op is a few KiB of output but a MiB of state (Qwen3.5-0.8B's 16
// heads of 128 x 128): its cost must split it across the threads, or one thread updates the
// whole state while the others wait. Split, it computes what one thread does.
TEST(CpuBackend, DecodeRecurrentOpsSplitAcrossThreads) {
  Bench b;
  const int64_t S = 128, H = 16;
  auto heads = [&](int64_t s, int64_t h) { return b.random(Type::F32, {s, h, 1}, -0.1f, 0.1f); };
  Tensor* g = b.random(Type::F32, {H, 1}, -2.0f, 0.0f);
  Tensor* beta = b.random(Type::F32, {H, 1}, 0.0f, 1.0f);
  Tensor* gdn = gated_delta_net(b.ctx, heads(S, H), heads(S, H), heads(S, H), g, beta,
                                b.random(Type::F32, {S * S * H, 1}));
  const int64_t Sr = 64, Hr = 12;  // RWKV7-0.1B
  Tensor* in[6];
  for (int i = 0; i < 6; i++) in[i] = heads(Sr, Hr);
  Tensor* wkv = rwkv_wkv7(b.ctx, in[0], in[1], in[2], in[3], in[4], in[5], b.random(Type::F32, {Sr * Sr * Hr, 1}));
  for (Tensor* node : {gdn, wkv}) {
    EXPECT_EQ(make_schedule({node}, kernels(), 2).steps.at(0).pieces, 2) << op_name(node->op);
    b.run({node}, 1);
    const Dense one = read(*node);
    b.run({node}, 2);
    expect_near(read(*node), one, 0.0);
  }
  Tensor* tiny = gated_delta_net(b.ctx, heads(4, 1), heads(4, 1), heads(4, 1), b.random(Type::F32, {1, 1}),
                                 b.random(Type::F32, {1, 1}), b.random(Type::F32, {16, 1}));
  EXPECT_EQ(make_schedule({tiny}, kernels(), 2).steps.at(0).pieces, 1);  // not worth a split
}

TEST(CpuBackend, BadRowIdsAndUnsupportedTypesThrow) {
  Bench b;
  Tensor* table = b.random(Type::F32, {8, 4});
  Tensor* ids = b.random(Type::I32, {3}, 0, 4);
  static_cast<int32_t*>(ids->data)[1] = 4;
  Tensor* y = get_rows(b.ctx, table, ids);
  try {
    b.run({y}, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row id 4"), std::string::npos) << e.what();
  }
  CpuBackend cpu(1);
  Tensor* w = b.ctx.new_tensor(Type::NVFP4, {256, 4});  // a type hart cannot compute with
  Tensor* x = b.random(Type::F32, {256, 1});
  Tensor* mm = mul_mat(b.ctx, w, x);
  EXPECT_FALSE(cpu.supports_op(*mm));
  EXPECT_TRUE(cpu.supports_op(*y));
  EXPECT_THROW(cpu.compute(build_graph({mm})), Error);
}

}  // namespace
}  // namespace hart::cpu::test
