// Focused tests of the x86 kernel sets, each held to the scalar reference: activation quantizers
// bit-exact with quantize_row, quantized dots against quant.h's vec_dot on the same blocks,
// float dots and row primitives against double-precision sums. Sizes are odd and include tails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/arch/x86/cpu_features.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sets_under_test.h"
#include "common/fp16.h"
#include "quant/blocks.h"
#include "quant/quant.h"
#include "quant/random_blocks.h"

namespace hart::cpu {
namespace {

class X86Set : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::vector<ArchKernelSet> sets = arch_kernel_sets();
    for (const ArchKernelSet& twin : arch_test_twins()) sets.push_back(twin);
    for (const ArchKernelSet& set : sets) {
      if (set.name != GetParam()) continue;
      if (!set.supported()) GTEST_SKIP() << "this CPU lacks " << set.name;
      set.fill(k);
      return;
    }
    FAIL() << "no kernel set named " << GetParam();
  }

  std::vector<float> random_floats(int64_t n, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    return v;
  }

  // Rows whose blocks span magnitudes from 1e-3 to 1e2, as real activations and weights do.
  std::vector<float> varied_floats(int64_t n) {
    std::vector<float> v = random_floats(n, -1.0f, 1.0f);
    std::uniform_real_distribution<float> exponent(-3.0f, 2.0f);
    for (size_t b = 0; b < v.size(); b += 32) {
      const float s = std::pow(10.0f, exponent(rng));
      for (size_t i = b; i < b + 32 && i < v.size(); ++i) v[i] *= s;
    }
    return v;
  }

  Kernels k;
  std::mt19937 rng{1234};
};

std::vector<uint8_t> quantized(Type t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_size(t, int64_t(x.size())));
  quantize_test_row(t, x.data(), q.data(), int64_t(x.size()));
  return q;
}

std::vector<float> dequantized(Type t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  dequantize_row(t, q.data(), x.data(), n);
  return x;
}

double abs_dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(double(a[i]) * double(b[i]));
  return s;
}

TEST(X86Features, AvxLevelsNest) {
  const x86::CpuFeatures& f = x86::cpu_features();
  EXPECT_TRUE(f.avx2 || !f.avx512);
  EXPECT_TRUE(f.avx512 || !f.avx512_vnni);
  EXPECT_TRUE(f.avx512_vnni || !f.avx512_bf16);
  EXPECT_TRUE(f.avx512_bf16 || !f.amx);
  EXPECT_TRUE(f.avx2 || !f.avx2_vnni);
}

TEST(X86Registry, EverySupportedSetIsSelectable) {
  std::vector<std::string> names;
  for (const Kernels* k : available_kernels()) names.push_back(k->name);
  for (const ArchKernelSet& set : arch_kernel_sets())
    EXPECT_EQ(std::find(names.begin(), names.end(), set.name) != names.end(), set.supported()) << set.name;
}

// ---- activation quantizers ----------------------------------------------------------------

TEST_P(X86Set, ActivationQuantizersMatchQuantizeRowBitForBit) {
  for (Type t : {Type::Q8_0, Type::Q8_1, Type::Q8_K}) {
    ASSERT_NE(k.from_f32[int(t)], nullptr) << type_name(t);
    const int64_t bs = type_info(t).block_size;
    for (int64_t blocks : {1, 3, 17}) {
      const int64_t n = blocks * bs;
      std::vector<float> x = varied_floats(n);
      // Edge cases: an all-zero block, and values landing exactly on .5 steps (rounding ties).
      std::fill(x.begin(), x.begin() + bs, 0.0f);
      if (blocks > 1)
        for (int64_t i = 0; i < bs; ++i) x[size_t(bs + i)] = float(i - bs / 2) * 0.5f;
      std::vector<uint8_t> got(row_size(t, n), 0xAA);
      k.from_f32[int(t)](x.data(), got.data(), n);
      EXPECT_EQ(got, quantized(t, x)) << type_name(t) << " n=" << n;
    }
  }
}

// The 16-bit float converters (F16 for KV caches; BF16 activations in avx512_bf16): the reference's
// bits for ties, denormals (kept, not flushed), overflow to infinity, signed zeros, infinities and
// NaNs (made quiet, payload kept), at every tail length.
TEST_P(X86Set, HalfConvertersMatchTheReferenceRounding) {
  const uint32_t specials[] = {0x3f808000, 0x3f818000, 0x3f801000, 0x3f803000, 0x00000001, 0x807fffff, 0x38800000,
                               0x387fffff, 0x33000000, 0x33000001, 0x477ff000, 0x477fefff, 0x80000000, 0x7f800000,
                               0xff800000, 0x7fc00001, 0xff812345, 0x7f7fffff, 0x0000ffff};
  for (Type t : {Type::F16, Type::BF16}) {
    if (!k.from_f32[int(t)]) continue;
    for (int64_t n : {1, 7, 16, 17, 31, 100, 1000}) {
      std::vector<float> x = random_floats(n, -3.0f, 3.0f);
      for (size_t i = 0; i < x.size(); i += 3) {
        const uint32_t bits = specials[(i / 3) % std::size(specials)];
        std::memcpy(&x[i], &bits, 4);
      }
      std::vector<uint16_t> got(size_t(n) + 1, 0x5a5a), want(size_t(n) + 1, 0x5a5a);
      k.from_f32[int(t)](x.data(), got.data(), n);
      for (size_t i = 0; i < size_t(n); ++i) want[i] = t == Type::F16 ? f32_to_fp16(x[i]) : f32_to_bf16(x[i]);
      EXPECT_EQ(got, want) << type_name(t) << " n=" << n;
    }
  }
}

TEST_P(X86Set, Q8KPicksTheFirstLargestMagnitudeForItsSign) {
  std::vector<float> x = random_floats(QK_K, -1.0f, 1.0f);
  x[40] = -3.0f;  // first of equal magnitudes: the scale must be negative-signed from this one
  x[200] = 3.0f;
  std::vector<uint8_t> got(row_size(Type::Q8_K, QK_K));
  k.from_f32[int(Type::Q8_K)](x.data(), got.data(), QK_K);
  EXPECT_EQ(got, quantized(Type::Q8_K, x));
}

// ---- quantized dot products ---------------------------------------------------------------

struct DotCase {
  Type weight, act;
};
const DotCase kDotCases[] = {
    {Type::Q8_0, Type::Q8_0}, {Type::Q4_0, Type::Q8_0}, {Type::Q5_0, Type::Q8_0},
    {Type::IQ4_NL, Type::Q8_0}, {Type::Q4_1, Type::Q8_1}, {Type::Q5_1, Type::Q8_1},
    {Type::Q4_K, Type::Q8_K}, {Type::Q5_K, Type::Q8_K}, {Type::Q6_K, Type::Q8_K},
    {Type::Q2_K, Type::Q8_K}, {Type::Q3_K, Type::Q8_K}, {Type::IQ4_XS, Type::Q8_K},
    {Type::TQ1_0, Type::Q8_K}, {Type::TQ2_0, Type::Q8_K}, {Type::MXFP4, Type::Q8_0},
    {Type::IQ2_XXS, Type::Q8_K}, {Type::IQ2_XS, Type::Q8_K}, {Type::IQ2_S, Type::Q8_K},
    {Type::IQ3_XXS, Type::Q8_K}, {Type::IQ3_S, Type::Q8_K}, {Type::IQ1_S, Type::Q8_K},
    {Type::IQ1_M, Type::Q8_K}, {Type::Q1_0, Type::Q8_0}, {Type::Q2_0, Type::Q8_0},
};

// Weight blocks with every quant bit random (high scale bits, extreme levels included) and the
// fp16 scale fields reset to modest values.
std::vector<uint8_t> random_blocks(Type t, int64_t n, std::mt19937& rng) {
  if (is_iq_grid_type(t)) return random_iq_blocks(t, n, rng);
  std::vector<uint8_t> q(row_size(t, n));
  for (uint8_t& b : q) b = uint8_t(rng());
  const size_t bsize = type_info(t).type_size;
  std::vector<size_t> scale_fields = {0};  // byte offsets of fp16 fields in a block
  if (t == Type::Q4_1 || t == Type::Q5_1 || t == Type::Q4_K || t == Type::Q5_K) scale_fields = {0, 2};
  if (t == Type::Q6_K) scale_fields = {offsetof(block_q6_K, d)};
  if (t == Type::Q2_K) scale_fields = {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)};
  if (t == Type::Q3_K) scale_fields = {offsetof(block_q3_K, d)};
  if (t == Type::TQ1_0) scale_fields = {offsetof(block_tq1_0, d)};
  if (t == Type::TQ2_0) scale_fields = {offsetof(block_tq2_0, d)};
  if (t == Type::MXFP4) {  // E8M0 exponents near 2^-4 instead of an fp16 field
    for (size_t b = 0; b < q.size(); b += bsize) q[b] = uint8_t(118 + rng() % 8);
    return q;
  }
  std::uniform_real_distribution<float> d(-0.05f, 0.05f);
  for (size_t b = 0; b < q.size(); b += bsize)
    for (size_t off : scale_fields) {
      const fp16_t h = f32_to_fp16(d(rng));
      std::memcpy(&q[b + off], &h, 2);
    }
  return q;
}

TEST_P(X86Set, QuantizedDotsMatchVecDot) {
  for (const DotCase& c : kDotCases) {
    ASSERT_EQ(k.dot[int(c.weight)].act_type, c.act) << type_name(c.weight);
    ASSERT_EQ(vec_dot_type(c.weight), c.act);
    const int64_t bs = type_info(c.weight).block_size;
    for (int64_t blocks : {1, 5, 33}) {
      const int64_t n = blocks * bs;
      const std::vector<float> xf = varied_floats(n);
      const std::vector<uint8_t> x = quantized(c.act, xf);
      for (bool raw : {false, true}) {
        const std::vector<uint8_t> w = raw ? random_blocks(c.weight, n, rng) : quantized(c.weight, varied_floats(n));
        float want = 0, got = 0;
        vec_dot(c.weight, n, &want, w.data(), x.data());
        k.dot[int(c.weight)].vec_dot(n, &got, w.data(), x.data());
        const double mag = abs_dot(dequantized(c.weight, w, n), dequantized(c.act, x, n));
        EXPECT_NEAR(got, want, 2e-6 * mag * std::sqrt(double(blocks)) + 1e-30)
            << type_name(c.weight) << " n=" << n << (raw ? " random bits" : " quantized");
      }
    }
  }
}

// Every quantized panel GEMM of the set (weights packed with its PackFn) against quant.h's vec_dot
// per (row, activation row): K of 1, 5 and 33 blocks, 1 and 2 panels, every remainder of the
// activation row tile and several tiles (AMX's of 16 too), weights with every bit random and quantized ones; the
// y columns past the panels' rows stay untouched.
TEST_P(X86Set, QuantizedPanelGemmsMatchVecDot) {
  for (const DotCase& c : kDotCases) {
    const PanelKernel& pk = k.panel[int(c.weight)];
    if (pk.rows == 0) continue;
    const int64_t bs = type_info(c.weight).block_size;
    for (int64_t blocks : {1, 5, 33}) {
      const int64_t n = blocks * bs;
      const size_t w_row = row_size(c.weight, n), x_row = row_size(c.act, n);
      constexpr int64_t kRowsX = 35;
      std::vector<uint8_t> x;
      std::vector<std::vector<float>> xd;
      for (int64_t j = 0; j < kRowsX; ++j) {
        const std::vector<uint8_t> xj = quantized(c.act, varied_floats(n));
        x.insert(x.end(), xj.begin(), xj.end());
        xd.push_back(dequantized(c.act, xj, n));
      }
      for (bool raw : {false, true})
        for (int64_t n_panels : {1, 2}) {
          const int64_t rows = n_panels * pk.rows;
          std::vector<uint8_t> w, panels(w_row * size_t(rows));
          for (int64_t i = 0; i < rows; ++i) {
            const std::vector<uint8_t> wi =
                raw ? random_blocks(c.weight, n, rng) : quantized(c.weight, varied_floats(n));
            w.insert(w.end(), wi.begin(), wi.end());
          }
          for (int64_t p = 0; p < n_panels; ++p)
            pk.pack(n, pk.rows, w.data() + size_t(p * pk.rows) * w_row, w_row,
                    panels.data() + size_t(p * pk.rows) * w_row);
          // Each (W row, X row)'s vec_dot and its scale sum |w x|, once for every nx below.
          std::vector<float> want(size_t(rows * kRowsX));
          std::vector<double> tol(want.size());
          for (int64_t i = 0; i < rows; ++i) {
            const uint8_t* wi = w.data() + size_t(i) * w_row;
            const std::vector<float> wd = dequantized(c.weight, std::vector<uint8_t>(wi, wi + w_row), n);
            for (int64_t j = 0; j < kRowsX; ++j) {
              vec_dot(c.weight, n, &want[size_t(j * rows + i)], wi, x.data() + size_t(j) * x_row);
              tol[size_t(j * rows + i)] = 2e-6 * abs_dot(wd, xd[size_t(j)]) * std::sqrt(double(blocks)) + 1e-30;
            }
          }
          for (int64_t nx : {1, 2, 3, 4, 5, 7, 11, 16, 35}) {  // 16 and 35: AMX's tiles of 16 and a tail
            const size_t y_stride = size_t(rows) + 3;
            std::vector<float> y(y_stride * size_t(nx), -7.0f);
            std::vector<std::byte> scratch(pk.scratch_bytes(n, nx));  // exactly: ASan sees an overrun
            pk.gemm(n, n_panels, nx, panels.data(), size_t(pk.rows) * w_row, x.data(), x_row, y.data(), y_stride,
                    scratch.data());
            for (int64_t j = 0; j < nx; ++j)
              for (int64_t i = 0; i < rows; ++i)
                ASSERT_NEAR(y[size_t(j) * y_stride + size_t(i)], want[size_t(j * rows + i)], tol[size_t(j * rows + i)])
                    << type_name(c.weight) << " n=" << n << " panels=" << n_panels << " nx=" << nx << " row " << i
                    << " x row " << j << (raw ? " random bits" : " quantized");
            for (int64_t j = 0; j < nx; ++j)
              for (size_t i = size_t(rows); i < y_stride; ++i) ASSERT_EQ(y[size_t(j) * y_stride + i], -7.0f);
          }
        }
    }
  }
}

// ---- float dots -------------------------------------------------------------------------

const int64_t kSizes[] = {1, 7, 8, 15, 16, 17, 33, 63, 64, 65, 100, 1000, 4099};

TEST_P(X86Set, FloatDotsMatchDoubleSums) {
  for (Type t : {Type::F32, Type::F16, Type::BF16}) {
    // F32 activations, or (BF16 weights in avx512_bf16) BF16: then the sum is of the rounded x.
    const Type act = k.dot[int(t)].act_type;
    ASSERT_TRUE(act == Type::F32 || (t == Type::BF16 && act == Type::BF16)) << type_name(t);
    for (int64_t n : kSizes) {
      const std::vector<float> wf = random_floats(n, -2.0f, 2.0f), xf = random_floats(n, -2.0f, 2.0f);
      const std::vector<uint8_t> w = quantized(t, wf), xa = quantized(act, xf);
      const std::vector<float> wd = dequantized(t, w, n), x = dequantized(act, xa, n);
      double want = 0;
      for (int64_t i = 0; i < n; ++i) want += double(wd[size_t(i)]) * double(x[size_t(i)]);
      float got = 0;
      k.dot[int(t)].vec_dot(n, &got, w.data(), xa.data());
      EXPECT_NEAR(got, want, 1e-6 * abs_dot(wd, x) + 1e-30) << type_name(t) << " n=" << n;
      if (t == Type::F32) continue;
      std::vector<float> rows(static_cast<size_t>(n) + 1, 42.0f);
      k.to_f32[int(t)](w.data(), rows.data(), n);
      EXPECT_EQ(rows, [&] { auto r = wd; r.push_back(42.0f); return r; }()) << "to_f32 " << type_name(t);
    }
  }
  for (int64_t n : kSizes) {
    const std::vector<float> a = random_floats(n, -2.0f, 2.0f), b = random_floats(n, -2.0f, 2.0f);
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += double(a[size_t(i)]) * double(b[size_t(i)]);
    EXPECT_NEAR(k.dot_f32(n, a.data(), b.data()), want, 1e-6 * abs_dot(a, b)) << "n=" << n;
  }
}

// ---- row primitives ---------------------------------------------------------------------

// Relative error bound for kernels built on the vector exp (a few ulp); results below 1e-30
// get absolute slack (silu(-90) is -0 in float, as with expf).
constexpr double kExpTol = 4e-7;

void expect_rel_near(const std::vector<float>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * std::fabs(want[i]) + 1e-30) << what << " at " << i << " of " << got.size();
}

TEST_P(X86Set, ElementwiseKernelsTouchExactlyNElements) {
  for (int64_t n : kSizes) {
    const std::vector<float> a = random_floats(n, -3.0f, 3.0f), b = random_floats(n, -3.0f, 3.0f);
    const size_t m = size_t(n);
    std::vector<float> y(m + 1, 42.0f);  // the element past the end must survive the tails
    k.add(n, a.data(), b.data(), y.data());
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(y[i], a[i] + b[i]);
    k.sub(n, a.data(), b.data(), y.data());
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(y[i], a[i] - b[i]);
    k.mul(n, a.data(), b.data(), y.data());
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(y[i], a[i] * b[i]);
    k.scale(n, a.data(), 0.37f, y.data());
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(y[i], a[i] * 0.37f);
    std::vector<float> acc = b;
    acc.push_back(42.0f);
    k.axpy(n, -1.5f, a.data(), acc.data());
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(acc[i], std::fma(-1.5f, a[i], b[i]));
    EXPECT_EQ(y[m], 42.0f);
    EXPECT_EQ(acc[m], 42.0f);
  }
}

TEST_P(X86Set, SiluGeluAndTheirGatesFollowTheExpRange) {
  for (int64_t n : kSizes) {
    const std::vector<float> x = random_floats(n, -100.0f, 100.0f), up = random_floats(n, -2.0f, 2.0f);
    const size_t m = size_t(n);
    std::vector<double> silu(m), swiglu(m), gelu(m), geglu(m), gelu_tol(m);
    for (size_t i = 0; i < m; ++i) {
      const double v = x[i], two_u = 2 * 0.7978845608028654 * (v + 0.044715 * v * v * v);
      silu[i] = v / (1.0 + std::exp(-v));
      swiglu[i] = silu[i] * double(up[i]);
      gelu[i] = v / (1.0 + std::exp(-two_u));  // = 0.5 v (1 + tanh(u)), without cancellation
      geglu[i] = gelu[i] * double(up[i]);
      // The float rounding of the exp argument 2u scales the relative error by |2u|.
      gelu_tol[i] = 2 * kExpTol + 3e-7 * std::fabs(two_u);
    }
    std::vector<float> y(m), y2(m);
    k.silu(n, x.data(), y.data());
    expect_rel_near(y, silu, kExpTol, "silu");
    k.swiglu(n, x.data(), up.data(), y.data());
    expect_rel_near(y, swiglu, 2 * kExpTol, "swiglu");
    k.gelu(n, x.data(), y.data());
    k.geglu(n, x.data(), up.data(), y2.data());
    for (size_t i = 0; i < m; ++i) {
      ASSERT_NEAR(y[i], gelu[i], gelu_tol[i] * std::fabs(gelu[i]) + 1e-30) << "gelu(" << x[i] << ")";
      ASSERT_NEAR(y2[i], geglu[i], (gelu_tol[i] + kExpTol) * std::fabs(geglu[i]) + 1e-30) << "geglu";
    }
  }
}

TEST_P(X86Set, SoftmaxIncludingMaskedAndUnderflowingEntries) {
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, -120.0f, 10.0f);
    if (n > 3) x[2] = -INFINITY;
    float mx = -INFINITY;
    for (float v : x) mx = std::max(mx, v);
    double sum = 0;
    std::vector<double> want(static_cast<size_t>(n));  // x - max rounds in float, as in ref
    for (size_t i = 0; i < size_t(n); ++i) sum += (want[i] = std::exp(double(x[i] - mx)));
    for (double& w : want) w /= sum;
    k.softmax(n, x.data());
    // Tiny probabilities come out of exp's subnormal range: absolute slack there.
    for (size_t i = 0; i < size_t(n); ++i)
      ASSERT_NEAR(x[i], want[i], 1e-6 * want[i] + 1e-37) << "n=" << n << " i=" << i;
  }
  std::vector<float> masked(19, -INFINITY);
  k.softmax(19, masked.data());
  for (float v : masked) EXPECT_EQ(v, 0.0f);
}

TEST_P(X86Set, RmsNorm) {
  for (int64_t n : kSizes) {
    const std::vector<float> x = random_floats(n, -4.0f, 4.0f);
    double ss = 0;
    for (float v : x) ss += double(v) * double(v);
    const double s = 1.0 / std::sqrt(ss / double(n) + 1e-5);
    std::vector<double> want(static_cast<size_t>(n));
    for (size_t i = 0; i < size_t(n); ++i) want[i] = double(x[i]) * s;
    std::vector<float> y(static_cast<size_t>(n));
    k.rms_norm(n, x.data(), y.data(), 1e-5f);
    expect_rel_near(y, want, 1e-6, "rms_norm");
  }
}

// AMX replaces only the integer block sums of the 32-element panels, with the same sums: its
// GEMMs equal avx512_bf16's (whose VNNI panels it falls back to below 16 activation rows) bit for
// bit, over tiles of 16 rows and a tail, random weight bits included.
TEST_P(X86Set, AmxPanelsEqualTheVnniPanelsBitForBit) {
  if (GetParam() != "amx") GTEST_SKIP() << "the amx set's test";
  Kernels vnni;
  for (const ArchKernelSet& set : arch_kernel_sets())
    if (set.name == "avx512_bf16") set.fill(vnni);
  for (Type t : {Type::Q4_0, Type::Q5_0, Type::Q8_0, Type::IQ4_NL}) {
    const PanelKernel &pk = k.panel[int(t)], &pv = vnni.panel[int(t)];
    ASSERT_EQ(pk.rows, pv.rows);
    const int64_t n = 7 * 32, rows = 2 * pk.rows, nx = 37;
    const size_t w_row = row_size(t, n), x_row = row_size(Type::Q8_0, n);
    std::vector<uint8_t> w, x, panels(w_row * size_t(rows));
    for (int64_t i = 0; i < rows; ++i) {
      const std::vector<uint8_t> wi = i % 3 ? quantized(t, varied_floats(n)) : random_blocks(t, n, rng);
      w.insert(w.end(), wi.begin(), wi.end());
    }
    for (int64_t j = 0; j < nx; ++j) {
      const std::vector<uint8_t> xj = quantized(Type::Q8_0, varied_floats(n));
      x.insert(x.end(), xj.begin(), xj.end());
    }
    for (int64_t p = 0; p < 2; ++p)
      pk.pack(n, pk.rows, w.data() + size_t(p * pk.rows) * w_row, w_row, panels.data() + size_t(p * pk.rows) * w_row);
    std::vector<float> got(size_t(rows * nx)), want(got.size());
    std::vector<std::byte> scratch(std::max(pk.scratch_bytes(n, nx), pv.scratch_bytes(n, nx)));
    pk.gemm(n, 2, nx, panels.data(), size_t(pk.rows) * w_row, x.data(), x_row, got.data(), size_t(rows), scratch.data());
    pv.gemm(n, 2, nx, panels.data(), size_t(pk.rows) * w_row, x.data(), x_row, want.data(), size_t(rows),
            scratch.data());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << type_name(t);
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, X86Set,
                         ::testing::Values("avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16", "amx",
                                           "avx2_vnni_evex"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hart::cpu
