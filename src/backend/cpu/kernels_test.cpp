// Every kernel set this CPU can run, entry by entry, against the scalar reference, on random
// data with odd sizes so vector tails are exercised.
#include "backend/cpu/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/sets_under_test.h"
#include "common/error.h"
#include "quant/quant.h"
#include "quant/random_blocks.h"

namespace hart::cpu {
namespace {

const int64_t kSizes[] = {1, 7, 16, 33, 65, 257};

std::vector<float> random_row(int64_t n, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], rel * (1.0f + std::fabs(want[i]))) << what << " n=" << got.size() << " i=" << i;
}

class KernelSet : public ::testing::TestWithParam<const Kernels*> {
 protected:
  const Kernels& k() const { return *GetParam(); }
  const Kernels& ref() const { return ref_kernels(); }
  std::mt19937 rng{1234};
};

TEST_P(KernelSet, RowPrimitives) {
  using Unary = void (*)(int64_t, const float*, float*);
  using Binary = void (*)(int64_t, const float*, const float*, float*);
  const std::pair<const char*, Unary> unaries[] = {
      {"silu", k().silu}, {"gelu", k().gelu}, {"exp", k().exp}, {"tanh", k().tanh}, {"sigmoid", k().sigmoid}};
  const std::pair<const char*, Unary> ref_unaries[] = {
      {"silu", ref().silu}, {"gelu", ref().gelu}, {"exp", ref().exp}, {"tanh", ref().tanh}, {"sigmoid", ref().sigmoid}};
  const std::pair<Binary, Binary> binaries[] = {{k().add, ref().add},       {k().sub, ref().sub},
                                                {k().mul, ref().mul},       {k().div, ref().div},
                                                {k().swiglu, ref().swiglu}, {k().geglu, ref().geglu}};
  for (int64_t n : kSizes) {
    const std::vector<float> a = random_row(n, rng, -8.0f, 8.0f), b = random_row(n, rng);
    std::vector<float> y(static_cast<size_t>(n)), r(static_cast<size_t>(n));
    for (size_t u = 0; u < std::size(unaries); u++) {
      unaries[u].second(n, a.data(), y.data());
      ref_unaries[u].second(n, a.data(), r.data());
      expect_close(y, r, 1e-5f, unaries[u].first);
    }
    for (auto [f, g] : binaries) {
      f(n, a.data(), b.data(), y.data());
      g(n, a.data(), b.data(), r.data());
      expect_close(y, r, 1e-5f, "binary");
    }
    k().clamp(n, a.data(), -1.5f, 3.25f, y.data());
    ref().clamp(n, a.data(), -1.5f, 3.25f, r.data());
    ASSERT_EQ(y, r) << "clamp n=" << n;
    k().scale(n, a.data(), 0.37f, y.data());
    ref().scale(n, a.data(), 0.37f, r.data());
    expect_close(y, r, 1e-6f, "scale");
    y = b;
    r = b;
    k().axpy(n, -1.25f, a.data(), y.data());
    ref().axpy(n, -1.25f, a.data(), r.data());
    expect_close(y, r, 1e-6f, "axpy");
    for (int64_t m : {1, 3, 32}) {  // a block of V rows: one, a few, a whole attention block
      std::vector<std::vector<float>> rows;
      std::vector<const float*> x;
      for (int64_t j = 0; j < m; j++) rows.push_back(random_row(n, rng));
      for (const auto& row : rows) x.push_back(row.data());
      const std::vector<float> w = random_row(m, rng);
      y = b;
      r = b;
      k().axpy_rows(n, m, w.data(), x.data(), y.data());
      ref().axpy_rows(n, m, w.data(), x.data(), r.data());
      expect_close(y, r, 1e-5f, "axpy_rows");
    }
    k().rms_norm(n, a.data(), y.data(), 1e-6f);
    ref().rms_norm(n, a.data(), r.data(), 1e-6f);
    expect_close(y, r, 1e-5f, "rms_norm");
    k().norm(n, a.data(), y.data(), 1e-5f);
    ref().norm(n, a.data(), r.data(), 1e-5f);
    expect_close(y, r, 1e-5f, "norm");
    // The recurrent state rows, updated into another row (a sequence's first token) and then in place:
    // both must give the reference's state and dot, and the other row must stay as it was.
    for (bool in_place : {false, true}) {
      const std::vector<float> s0 = random_row(n, rng);
      std::vector<float> s1 = s0, s2 = s0, out1 = random_row(n, rng), out2 = out1;
      float* dst1 = in_place ? s1.data() : out1.data();
      float* dst2 = in_place ? s2.data() : out2.data();
      const std::string how = in_place ? " in place" : " into another row";
      {  // RWKV-7: the update and the dot with r
        const std::vector<float> w = random_row(n, rng, 0.0f, 1.0f), kk = random_row(n, rng),
                                 bb = random_row(n, rng), rr = random_row(n, rng);
        const float y1 = k().wkv7_row(n, s1.data(), dst1, w.data(), kk.data(), bb.data(), rr.data(), 0.7f, -1.3f);
        const float y2 = ref().wkv7_row(n, s2.data(), dst2, w.data(), kk.data(), bb.data(), rr.data(), 0.7f, -1.3f);
        expect_close(s1, s2, 1e-6f, ("wkv7_row state" + how).c_str());
        expect_close(out1, out2, 1e-6f, ("wkv7_row output row" + how).c_str());
        ASSERT_NEAR(y1, y2, 1e-5f * float(n) * 4.0f) << "wkv7_row n=" << n << how;
      }
      {  // the gated delta rule: the update and the dot with q
        const std::vector<float> kk = random_row(n, rng), qq = random_row(n, rng);
        const float y1 = k().delta_row(n, s1.data(), dst1, 0.83f, kk.data(), -0.6f, qq.data());
        const float y2 = ref().delta_row(n, s2.data(), dst2, 0.83f, kk.data(), -0.6f, qq.data());
        expect_close(s1, s2, 1e-6f, ("delta_row state" + how).c_str());
        expect_close(out1, out2, 1e-6f, ("delta_row output row" + how).c_str());
        ASSERT_NEAR(y1, y2, 1e-5f * float(n) * 4.0f) << "delta_row n=" << n << how;
      }
      if (!in_place) {
        ASSERT_EQ(s1, s0) << "the input row is read only, n=" << n;
      }
    }
    y = a;
    r = a;
    if (n > 3) y[2] = r[2] = -INFINITY;  // masked entries
    k().softmax(n, y.data());
    ref().softmax(n, r.data());
    expect_close(y, r, 1e-6f, "softmax");
    // An online softmax block: first of a row (m = -inf), then one after earlier blocks (a larger
    // and a smaller running max), with and without a bias (masked pairs at -inf), and a block
    // whose pairs are all masked before anything was seen.
    for (auto [m0, l0] : {std::pair<float, float>{-INFINITY, 0.0f}, {9.0f, 3.5f}, {-9.0f, 0.25f}})
      for (bool with_bias : {false, true}) {
        std::vector<float> bias = random_row(n, rng, -1.0f, 1.0f);
        if (n > 3) bias[1] = -INFINITY;
        const float* bp = with_bias ? bias.data() : nullptr;
        float m1 = m0, l1 = l0, m2 = m0, l2 = l0;
        y = a;
        r = a;
        const float f1 = k().softmax_block(n, y.data(), 0.125f, bp, &m1, &l1);
        const float f2 = ref().softmax_block(n, r.data(), 0.125f, bp, &m2, &l2);
        const std::string what = "softmax_block m=" + std::to_string(m0) + (with_bias ? " bias" : "");
        expect_close(y, r, 1e-6f, what.c_str());
        ASSERT_EQ(m1, m2) << what;
        ASSERT_NEAR(l1, l2, 1e-6f * (1.0f + std::fabs(l2)) * float(n)) << what;
        ASSERT_NEAR(f1, f2, 1e-6f * f2) << what;
      }
    {
      std::vector<float> masked(size_t(n), -INFINITY), s(size_t(n), 5.0f);
      float m = -INFINITY, l = 0.0f;
      ASSERT_EQ(k().softmax_block(n, s.data(), 1.0f, masked.data(), &m, &l), 1.0f) << "all masked, n=" << n;
      ASSERT_EQ(m, -INFINITY);
      ASSERT_EQ(l, 0.0f);
      ASSERT_EQ(s, std::vector<float>(size_t(n), 0.0f)) << "all masked: no weight, n=" << n;
    }
    ASSERT_NEAR(k().dot_f32(n, a.data(), b.data()), ref().dot_f32(n, a.data(), b.data()), 1e-5f * float(n) * 16.0f);
    // RoPE on n pairs, both pairings, into a row one longer (its last element must stay) and in place.
    for (bool neox : {false, true}) {
      const std::vector<float> cs = random_row(n, rng, -1.0f, 1.0f), sn = random_row(n, rng, -1.0f, 1.0f);
      std::vector<float> x2 = random_row(2 * n, rng), y2(size_t(2 * n + 1), 7.0f), r2 = y2;
      k().rope(n, neox, cs.data(), sn.data(), x2.data(), y2.data());
      ref().rope(n, neox, cs.data(), sn.data(), x2.data(), r2.data());
      expect_close(y2, r2, 1e-6f, neox ? "rope neox" : "rope");
      x2.push_back(7.0f);
      k().rope(n, neox, cs.data(), sn.data(), x2.data(), x2.data());
      expect_close(x2, r2, 1e-6f, neox ? "rope neox in place" : "rope in place");
    }
  }
  const std::vector<float> extremes = {-INFINITY, -200.0f, -103.0f, -87.5f, 0.0f, 88.5f, 200.0f, INFINITY};
  std::vector<float> e(extremes.size()), re(extremes.size());
  k().exp(int64_t(e.size()), extremes.data(), e.data());
  ref().exp(int64_t(re.size()), extremes.data(), re.data());
  for (size_t i = 0; i < e.size(); i++)  // 0 below the subnormals, inf above FLT_MAX (within 4 ulp)
    EXPECT_FLOAT_EQ(e[i], re[i]) << "exp(" << extremes[i] << ")";
  k().tanh(int64_t(e.size()), extremes.data(), e.data());
  for (size_t i = 0; i < e.size(); i++)  // saturates to -1, 1 (0 stays 0)
    EXPECT_NEAR(e[i], std::tanh(extremes[i]), 1e-6f) << "tanh(" << extremes[i] << ")";
  std::vector<float> masked(9, -INFINITY);
  k().softmax(9, masked.data());
  for (float x : masked) EXPECT_EQ(x, 0.0f);
}

// top_k against the reference's partial sort: random rows, rows of few distinct values (ties),
// signed zeros, infinities and NaNs, every k.
TEST_P(KernelSet, TopKMatchesReference) {
  std::uniform_int_distribution<int> level(-3, 3);
  for (int64_t n : {1, 2, 7, 8, 9, 16, 33, 64, 128, 257}) {
    for (int trial = 0; trial < 3; trial++) {
      std::vector<float> x = random_row(n, rng);
      if (trial == 1)
        for (float& v : x) v = float(level(rng)) * 0.5f;  // many ties
      if (trial == 2) {
        const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN};
        for (int64_t i = 0; i < n; i += 3) x[size_t(i)] = specials[size_t(i / 3) % std::size(specials)];
      }
      for (int kk : {1, 2, 8, int(n)}) {
        if (kk > n) continue;
        std::vector<int32_t> got(size_t(kk), -1), want(size_t(kk), -2);
        k().top_k(n, x.data(), kk, got.data());
        ref().top_k(n, x.data(), kk, want.data());
        ASSERT_EQ(got, want) << "top_k n=" << n << " k=" << kk << " trial " << trial;
      }
    }
  }
  const std::vector<float> x = {1.0f, 3.0f, 3.0f, -0.0f, 0.0f, 2.0f};  // the documented order
  std::vector<int32_t> idx(6);
  k().top_k(6, x.data(), 6, idx.data());
  EXPECT_EQ(idx, (std::vector<int32_t>{1, 2, 5, 0, 4, 3}));
}

// n elements of type t from random floats (types that cannot be quantized are skipped).
std::vector<uint8_t> random_typed_row(Type t, int64_t n, std::mt19937& rng) {
  const std::vector<float> f = random_row(n, rng);
  std::vector<uint8_t> out(row_size(t, n));
  quantize_test_row(t, f.data(), out.data(), n);
  return out;
}

TEST_P(KernelSet, ConvertersMatchReference) {
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    if (!ref().to_f32[ti] || !can_quantize(t)) continue;
    ASSERT_TRUE(k().to_f32[ti]) << type_name(t);
    const int64_t bs = type_info(t).block_size;
    for (int64_t n : {bs, 3 * bs, bs == 1 ? 257 : 5 * bs}) {
      const std::vector<uint8_t> row = random_typed_row(t, n, rng);
      std::vector<float> y(static_cast<size_t>(n)), r(static_cast<size_t>(n));
      k().to_f32[ti](row.data(), y.data(), n);
      ref().to_f32[ti](row.data(), r.data(), n);
      EXPECT_EQ(y, r) << "to_f32 " << type_name(t) << " n=" << n;
    }
  }
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    if (!k().from_f32[ti]) continue;
    ASSERT_TRUE(ref().from_f32[ti] && ref().to_f32[ti]) << type_name(t);
    const int64_t bs = type_info(t).block_size;
    for (int64_t n : {bs, 3 * bs, bs == 1 ? 257 : 5 * bs}) {
      const std::vector<float> x = random_row(n, rng);
      std::vector<uint8_t> a(row_size(t, n)), b(row_size(t, n));
      k().from_f32[ti](x.data(), a.data(), n);
      ref().from_f32[ti](x.data(), b.data(), n);
      std::vector<float> ya(static_cast<size_t>(n)), yb(static_cast<size_t>(n));
      ref().to_f32[ti](a.data(), ya.data(), n);
      ref().to_f32[ti](b.data(), yb.data(), n);
      // Rounding may differ by one step of the block scale (amax / 127 for 8-bit types).
      const float step = type_info(t).quantized ? 2.0f / 100.0f : 0.0f;
      for (int64_t i = 0; i < n; i++) ASSERT_NEAR(ya[size_t(i)], yb[size_t(i)], step) << type_name(t) << " i=" << i;
    }
  }
}

TEST_P(KernelSet, DotProductsMatchReference) {
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    const DotKernel& d = k().dot[ti];
    if (!d.vec_dot) continue;
    if (!can_quantize(t)) continue;  // no way to make a valid random row
    const int64_t bs = type_info(t).block_size;
    for (int64_t n : {bs, 3 * bs, bs == 1 ? 257 : 5 * bs}) {
      const std::vector<uint8_t> w = random_typed_row(t, n, rng);
      const std::vector<float> x = random_row(n, rng);
      std::vector<float> wf(static_cast<size_t>(n));
      ref().to_f32[ti](w.data(), wf.data(), n);
      double l1 = 0.0, wsum = 0.0, xmax = 0.0;
      for (int64_t i = 0; i < n; i++) {
        l1 += std::fabs(double(wf[size_t(i)]) * x[size_t(i)]);
        wsum += std::fabs(wf[size_t(i)]);
        xmax = std::max(xmax, double(std::fabs(x[size_t(i)])));
      }
      std::vector<uint8_t> xa(row_size(d.act_type, n));
      const void* xp = x.data();
      if (d.act_type != Type::F32) {
        ASSERT_TRUE(k().from_f32[size_t(d.act_type)]) << type_name(d.act_type);
        k().from_f32[size_t(d.act_type)](x.data(), xa.data(), n);
        xp = xa.data();
      }
      float got = 0.0f, want = 0.0f;
      d.vec_dot(n, &got, w.data(), xp);
      ref().dot[ti].vec_dot(n, &want, w.data(), x.data());
      const bool quantized_act = type_info(d.act_type).quantized;
      const double tol = d.act_type == Type::F32 ? 1e-5 * l1 + 1e-6
                         : quantized_act         ? wsum * xmax / 100.0
                                                 : 8e-3 * l1 + 1e-6;
      EXPECT_NEAR(got, want, tol) << k().name << " dot " << type_name(t) << " n=" << n;
    }
  }
}

// A tile of nw W rows x nx X rows (odd sizes: every micro-tile edge case) with padded strides
// equals the set's own vec_dot per pair, up to float summation order.
TEST_P(KernelSet, GemmTilesMatchVecDot) {
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    const DotKernel& d = k().dot[ti];
    if (!d.gemm || !can_quantize(t)) continue;
    const int64_t bs = type_info(t).block_size;
    for (int64_t n : {bs, 3 * bs, bs == 1 ? 67 : 5 * bs}) {
      const size_t w_stride = row_size(t, n) + 64, x_stride = row_size(d.act_type, n) + 32;
      for (auto [nw, nx] : {std::pair<int64_t, int64_t>{1, 1}, {9, 1}, {4, 4}, {7, 5}, {6, 11}}) {
        std::vector<uint8_t> w(w_stride * size_t(nw)), x(x_stride * size_t(nx));
        for (int64_t i = 0; i < nw; i++) {
          const std::vector<uint8_t> row = random_typed_row(t, n, rng);
          std::copy(row.begin(), row.end(), w.begin() + std::ptrdiff_t(size_t(i) * w_stride));
        }
        for (int64_t j = 0; j < nx; j++) {
          const std::vector<float> xf = random_row(n, rng);
          uint8_t* dst = x.data() + size_t(j) * x_stride;
          if (d.act_type == Type::F32) std::memcpy(dst, xf.data(), size_t(n) * sizeof(float));
          else k().from_f32[size_t(d.act_type)](xf.data(), dst, n);
        }
        const size_t y_stride = size_t(nw) + 3;
        std::vector<float> y(y_stride * size_t(nx), -1.0f);
        d.gemm(n, nw, nx, w.data(), w_stride, x.data(), x_stride, y.data(), y_stride);
        for (int64_t j = 0; j < nx; j++)
          for (int64_t i = 0; i < nw; i++) {
            float want = 0.0f;
            d.vec_dot(n, &want, w.data() + size_t(i) * w_stride, x.data() + size_t(j) * x_stride);
            ASSERT_NEAR(y[size_t(j) * y_stride + size_t(i)], want, 1e-4f * (1.0f + std::fabs(want)))
                << k().name << " gemm " << type_name(t) << " n=" << n << " tile " << nw << "x" << nx << " at " << i
                << "," << j;
          }
        for (int64_t j = 0; j < nx; j++)  // padding between output columns untouched
          for (size_t i = size_t(nw); i < y_stride; i++) ASSERT_EQ(y[size_t(j) * y_stride + i], -1.0f);
      }
    }
  }
}

// Attention scores for every row count a tile can have (one query head, a GQA group, a tile of
// tokens) and block size (a lone pair, a tail, a whole block), over head sizes with vector tails
// and more than one chunk, K rows scattered in memory and in no order: the set's own vec_dot per
// pair, up to float summation order.
TEST_P(KernelSet, ScoresMatchVecDot) {
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    const DotKernel& dk = k().dot[ti];
    if (!dk.scores) continue;
    for (int64_t d : {1, 7, 16, 64, 100, 128, 257, 600}) {
      const size_t q_stride = row_size(dk.act_type, d) + 16;
      for (auto [rows, n] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {3, 32}, {1, 17}, {48, 32}, {5, 33}}) {
        std::vector<std::vector<uint8_t>> krows;
        std::vector<const char*> kptr;
        for (int64_t j = 0; j < n; j++) krows.push_back(random_typed_row(t, d, rng));
        for (int64_t j = n - 1; j >= 0; j--) kptr.push_back(reinterpret_cast<const char*>(krows[size_t(j)].data()));
        std::vector<uint8_t> q(q_stride * size_t(rows));
        for (int64_t i = 0; i < rows; i++) {
          const std::vector<float> qf = random_row(d, rng);
          uint8_t* dst = q.data() + size_t(i) * q_stride;
          if (dk.act_type == Type::F32) std::memcpy(dst, qf.data(), size_t(d) * sizeof(float));
          else k().from_f32[size_t(dk.act_type)](qf.data(), dst, d);
        }
        std::vector<float> s(size_t(rows * n) + 1, -1.0f);
        dk.scores(d, rows, q.data(), q_stride, n, kptr.data(), s.data());
        for (int64_t i = 0; i < rows; i++)
          for (int64_t j = 0; j < n; j++) {
            float want = 0.0f;
            dk.vec_dot(d, &want, kptr[size_t(j)], q.data() + size_t(i) * q_stride);
            ASSERT_NEAR(s[size_t(i * n + j)], want, 1e-4f * (1.0f + std::fabs(want)))
                << k().name << " scores " << type_name(t) << " d=" << d << " " << rows << "x" << n << " at " << i
                << "," << j;
          }
        ASSERT_EQ(s.back(), -1.0f) << "written past rows x n";
      }
    }
  }
}

TEST_P(KernelSet, ArgmaxMatchesReference) {
  // The reference's contract on rows made by hand.
  const float nan = NAN, inf = INFINITY;
  const std::vector<std::pair<std::vector<float>, int64_t>> cases = {
      {{}, 0}, {{nan, nan}, 0}, {{-inf, -inf}, 0}, {{nan, -inf, 1.0f, nan}, 2}, {{-0.0f, 0.0f}, 0}, {{3, 5, 5, 1}, 1}};
  for (const auto& [x, want] : cases) {
    ASSERT_EQ(ref().argmax(int64_t(x.size()), x.data()), want);
    ASSERT_EQ(k().argmax(int64_t(x.size()), x.data()), want) << k().name;
  }
  // Random rows of odd sizes and of a vocabulary's: a unique maximum, a tie, NaNs anywhere.
  for (int64_t n : {1, 7, 16, 33, 65, 257, 49157}) {
    for (int variant = 0; variant < 4; variant++) {
      std::vector<float> x = random_row(n, rng);
      std::uniform_int_distribution<int64_t> pos(0, n - 1);
      if (variant >= 1) x[size_t(pos(rng))] = 7.0f;  // a unique maximum anywhere
      if (variant >= 2) x[size_t(pos(rng))] = 7.0f;  // maybe a tie, earlier or later
      if (variant == 3)  // NaNs are passed over, wherever they are
        for (int64_t i = 0; i < n; i += 1 + pos(rng) % 13) x[size_t(i)] = nan;
      ASSERT_EQ(k().argmax(n, x.data()), ref().argmax(n, x.data())) << k().name << " n=" << n << " variant " << variant;
    }
  }
}

TEST_P(KernelSet, ValuesMatchConvertedAxpyRows) {
  for (uint32_t ti = 0; ti < kTypeCount; ti++) {
    const Type t = Type(ti);
    const ValuesFn values = k().values[ti];
    if (!values) continue;
    for (int64_t n : {1, 7, 16, 64, 100, 128, 257}) {
      for (auto [rows, m] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {3, 32}, {4, 17}, {9, 32}, {48, 3}}) {
        std::vector<std::vector<uint8_t>> vrows;
        std::vector<const char*> vptr;
        for (int64_t j = 0; j < m; j++) vrows.push_back(random_typed_row(t, n, rng));
        for (int64_t j = m - 1; j >= 0; j--) vptr.push_back(reinterpret_cast<const char*>(vrows[size_t(j)].data()));
        std::vector<std::vector<float>> vf;  // the same rows in the same order, as floats
        std::vector<const float*> vfptr;
        for (const char* raw : vptr) {
          vf.emplace_back(size_t(n));
          if (t == Type::F32) std::memcpy(vf.back().data(), raw, size_t(n) * sizeof(float));
          else k().to_f32[ti](raw, vf.back().data(), n);
        }
        for (const auto& row : vf) vfptr.push_back(row.data());
        const std::vector<float> a = random_row(rows * m, rng, 0.0f, 1.0f);
        std::vector<float> y = random_row(rows * n + 1, rng), want = y;
        y.back() = want.back() = -1.0f;
        values(n, rows, m, a.data(), vptr.data(), y.data());
        for (int64_t i = 0; i < rows; i++) k().axpy_rows(n, m, a.data() + i * m, vfptr.data(), want.data() + i * n);
        ASSERT_EQ(y, want) << k().name << " values " << type_name(t) << " n=" << n << " " << rows << "x" << m;
      }
    }
  }
}

std::string set_name(const ::testing::TestParamInfo<const Kernels*>& info) { return info.param->name; }

INSTANTIATE_TEST_SUITE_P(Available, KernelSet, ::testing::ValuesIn(sets_under_test()), set_name);

TEST(KernelSelection, RefIsAlwaysAvailableAndComplete) {
  const auto sets = available_kernels();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front()->name, "ref");
  const Kernels& r = ref_kernels();
  EXPECT_TRUE(r.dot_f32 && r.rms_norm && r.softmax && r.silu && r.gelu && r.swiglu && r.geglu && r.add &&
              r.sub && r.mul && r.div && r.clamp && r.top_k && r.argmax && r.softmax_block && r.scale && r.axpy && r.axpy_rows && r.rope && r.exp && r.tanh && r.sigmoid && r.norm &&
              r.wkv7_row && r.delta_row);
  for (Type t : {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0}) {
    EXPECT_TRUE(r.dot[size_t(t)].vec_dot) << type_name(t);
    EXPECT_EQ(r.dot[size_t(t)].act_type, Type::F32);
    EXPECT_TRUE(r.to_f32[size_t(t)]) << type_name(t);
  }
  EXPECT_TRUE(r.from_f32[size_t(Type::Q8_0)] && r.from_f32[size_t(Type::F16)]);
}

TEST(KernelSelection, SelectByNameAndRejectUnknown) {
  select_kernels("ref");
  EXPECT_EQ(kernels().name, "ref");
  try {
    select_kernels("foo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HART_ISA=foo: unknown kernel set (known: ref"), std::string::npos)
        << e.what();
  }
  const std::string best = available_kernels().back()->name;
  select_kernels(best);
  EXPECT_EQ(kernels().name, best);
}

}  // namespace
}  // namespace hart::cpu
