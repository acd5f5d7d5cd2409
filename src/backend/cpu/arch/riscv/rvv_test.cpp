// Focused tests of the RISC-V kernel sets: feature decoding, and every RVV kernel against a
// straightforward reference on random data with odd lengths (tails shorter than any VLEN).
// Run under QEMU at several VLENs by scripts/riscv-test; kernel tests skip on a core without V.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/arch/riscv/cpu_features.h"
#include "backend/cpu/kernels.h"
#include "common/error.h"
#include "quant/blocks.h"
#include "quant/quant.h"
#include "quant/random_blocks.h"

namespace hart::cpu {
namespace {

using riscv::decode_features;

constexpr uint64_t kHwcapV = 1ull << ('V' - 'A');
constexpr uint64_t kProbeV = 1ull << 2, kProbeZvfh = 1ull << 30;

TEST(RiscvFeatures, VComesFromHwcap) {
  const uint64_t imafdc = 0x112d;  // what QEMU reports for rv64gc
  EXPECT_TRUE(decode_features(imafdc | kHwcapV, std::nullopt, nullptr).v);
  EXPECT_FALSE(decode_features(imafdc, std::nullopt, nullptr).v);
}

TEST(RiscvFeatures, ZvfhComesFromHwprobe) {
  const auto f = decode_features(kHwcapV, kProbeV | kProbeZvfh, nullptr);
  EXPECT_TRUE(f.v && f.zvfh);
  EXPECT_FALSE(decode_features(kHwcapV, kProbeV, nullptr).zvfh);
  EXPECT_FALSE(decode_features(0, kProbeV | kProbeZvfh, nullptr).zvfh) << "Zvfh needs V";
  // hwprobe answers: the override is ignored.
  EXPECT_FALSE(decode_features(kHwcapV, kProbeV, "1").zvfh);
}

TEST(RiscvFeatures, OverrideOnlyWithoutHwprobe) {
  EXPECT_FALSE(decode_features(kHwcapV, std::nullopt, nullptr).zvfh);
  EXPECT_TRUE(decode_features(kHwcapV, std::nullopt, "1").zvfh);
  EXPECT_FALSE(decode_features(kHwcapV, std::nullopt, "0").zvfh);
  EXPECT_FALSE(decode_features(0, std::nullopt, "1").zvfh);
  EXPECT_THROW(decode_features(kHwcapV, std::nullopt, "yes"), Error);
}

// A copy of set `name` filled over an empty table (entries the set leaves alone stay null).
Kernels arch_set(const std::string& name) {
  for (const ArchKernelSet& s : arch_kernel_sets()) {
    if (s.name != name) continue;
    Kernels k;
    k.name = name;
    if (s.supported()) s.fill(k);
    return k;
  }
  ADD_FAILURE() << "no kernel set " << name;
  return {};
}

class RvvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!riscv::has_v()) GTEST_SKIP() << "this core has no V extension";
    k = arch_set("rvv");
  }
  std::vector<float> random(int64_t n, float lo = -4, float hi = 4) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
  }
  Kernels k;
  std::mt19937 rng{1234};
};

// Lengths around every VLMAX a test VLEN can give (LMUL 1..8, SEW 16/32), plus long rows.
const int64_t kLengths[] = {1, 3, 7, 15, 16, 17, 31, 33, 63, 65, 127, 129, 255, 257, 1000, 4099};

double dot_ref(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += double(a[i]) * double(b[i]);
  return s;
}

double abs_sum(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += std::fabs(double(a[i]) * double(b[i]));
  return s;
}

TEST_F(RvvTest, DotF32) {
  for (int64_t n : kLengths) {
    const auto a = random(n), b = random(n);
    EXPECT_NEAR(k.dot_f32(n, a.data(), b.data()), dot_ref(a, b), 1e-6 * abs_sum(a, b) + 1e-30)
        << "n=" << n;
  }
}

TEST_F(RvvTest, RmsNorm) {
  for (int64_t n : kLengths) {
    const auto x = random(n);
    std::vector<float> y(static_cast<size_t>(n));
    k.rms_norm(n, x.data(), y.data(), 1e-5f);
    const double r = 1.0 / std::sqrt(dot_ref(x, x) / double(n) + 1e-5);
    for (int64_t i = 0; i < n; i++) ASSERT_NEAR(y[i], x[i] * r, 2e-6 * std::fabs(x[i] * r) + 1e-7) << n;
  }
}

// Element-wise kernels against double-precision formulas, relative error in float ulps.
template <class Ref>
void expect_close(const std::vector<float>& got, Ref ref, double rel, const char* what) {
  for (size_t i = 0; i < got.size(); i++) {
    const double want = ref(i);
    ASSERT_NEAR(got[i], want, rel * std::fabs(want) + 1e-37) << what << " at " << i << " of " << got.size();
  }
}

double silu_ref(double x) { return x / (1 + std::exp(-x)); }

TEST_F(RvvTest, ElementWise) {
  for (int64_t n : kLengths) {
    const auto a = random(n, -30, 30), b = random(n);
    std::vector<float> y(static_cast<size_t>(n));
    k.silu(n, a.data(), y.data());
    expect_close(y, [&](size_t i) { return silu_ref(a[i]); }, 4e-7, "silu");
    k.swiglu(n, a.data(), b.data(), y.data());
    expect_close(y, [&](size_t i) { return silu_ref(a[i]) * b[i]; }, 5e-7, "swiglu");
    k.add(n, a.data(), b.data(), y.data());
    expect_close(y, [&](size_t i) { return float(a[i] + b[i]); }, 0, "add");
    k.mul(n, a.data(), b.data(), y.data());
    expect_close(y, [&](size_t i) { return float(a[i] * b[i]); }, 0, "mul");
    k.scale(n, a.data(), 0.37f, y.data());
    expect_close(y, [&](size_t i) { return float(a[i] * 0.37f); }, 0, "scale");
    y = b;
    k.axpy(n, 0.37f, a.data(), y.data());
    expect_close(y, [&](size_t i) { return std::fma(0.37f, a[i], b[i]); }, 0, "axpy");
  }
}

TEST_F(RvvTest, SoftmaxIncludingMaskedEntries) {
  for (int64_t n : kLengths) {
    auto x = random(n, -20, 20);
    for (int64_t i = 1; i < n; i += 3) x[size_t(i)] = -std::numeric_limits<float>::infinity();
    // x - max is rounded to float by any implementation: the reference starts from there.
    float max = -INFINITY;
    for (float v : x) max = std::max(max, v);
    std::vector<double> e(x.size());
    double sum = 0;
    for (size_t i = 0; i < x.size(); i++) sum += e[i] = std::exp(double(x[i] - max));
    auto y = x;
    k.softmax(n, y.data());
    expect_close(y, [&](size_t i) { return e[i] / sum; }, 5e-7, "softmax");
  }
}

TEST_F(RvvTest, SoftmaxOfFullyMaskedRowIsZero) {
  for (int64_t n : kLengths) {
    std::vector<float> x(static_cast<size_t>(n), -std::numeric_limits<float>::infinity());
    k.softmax(n, x.data());
    for (float v : x) ASSERT_EQ(v, 0.0f) << "n=" << n;
  }
}

// e^v over the whole float range. softmax({0, v}) = {.., e^v / (1 + e^v)} shows e^v for v <= 0
// down to the subnormals; silu(-v) = -v / (1 + e^v) shows it up to overflow.
TEST_F(RvvTest, ExpRange) {
  for (float v = -103.0f; v <= 88.7f; v += 0.0173f) {
    float pair[2] = {0.0f, v};
    k.softmax(2, pair);
    const double e = std::exp(double(v));
    ASSERT_NEAR(pair[1], e / (1 + e), 3e-7 * (e / (1 + e)) + 3e-45) << "v=" << v;
    const float neg = -v;
    float y = 0;
    k.silu(1, &neg, &y);
    ASSERT_NEAR(y, silu_ref(neg), 4e-7 * std::fabs(silu_ref(neg))) << "v=" << v;
  }
}

// ---- weight-type dot products and activation converters, against src/quant's reference ----

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

// Checks set k's entries for weight type t: the activation converter bit-exact, the dot product
// within float rounding of the reference on the very same quantized rows.
void check_weight_type(const Kernels& k, Type t, std::mt19937& rng) {
  const DotKernel& dk = k.dot[uint32_t(t)];
  ASSERT_NE(dk.vec_dot, nullptr) << type_name(t);
  ASSERT_EQ(dk.act_type, vec_dot_type(t)) << type_name(t);
  const FromF32Fn convert = k.from_f32[uint32_t(dk.act_type)];
  ASSERT_NE(convert, nullptr) << type_name(dk.act_type);
  // 63/65 blocks straddle the 32-element kernels' 64-block scale chunks; super-blocks have none
  // (and their reference quantizer is slow under QEMU).
  const int64_t block = std::max(type_info(t).block_size, type_info(dk.act_type).block_size);
  const std::vector<int64_t> counts =
      block == QK_K ? std::vector<int64_t>{1, 2, 5} : std::vector<int64_t>{1, 2, 7, 63, 64, 65, 130};
  for (int64_t blocks : counts) {
    const int64_t n = blocks * block;
    std::uniform_real_distribution<float> dist(-2, 2);
    std::vector<float> wf(static_cast<size_t>(n)), xf(static_cast<size_t>(n));
    for (float& v : wf) v = dist(rng);
    for (float& v : xf) v = dist(rng);
    const auto x_ref = quantized(dk.act_type, xf);
    std::vector<uint8_t> x(x_ref.size());
    convert(xf.data(), x.data(), n);
    ASSERT_EQ(x, x_ref) << "from_f32 " << type_name(dk.act_type) << " n=" << n;

    // Quantized rows, and for the IQ grid types also rows of random bits (every grid entry).
    for (bool raw : {false, is_iq_grid_type(t)}) {
      const auto w = raw ? random_iq_blocks(t, n, rng) : quantized(t, wf);
      float want = 0, got = 0;
      vec_dot(t, n, &want, w.data(), x.data());
      dk.vec_dot(n, &got, w.data(), x.data());
      const auto wd = dequantized(t, w, n), xd = dequantized(dk.act_type, x, n);
      EXPECT_NEAR(got, want, 2e-6 * abs_sum(wd, xd)) << type_name(t) << " n=" << n << (raw ? " (random bits)" : "");
      if (!raw) break;
    }
  }
}

TEST_F(RvvTest, WeightTypes) {
  for (Type t : {Type::Q8_0, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL, Type::Q2_K,
                 Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_XS, Type::TQ1_0,
                 Type::TQ2_0, Type::MXFP4, Type::BF16, Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S,
                 Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M})
    check_weight_type(k, t, rng);
}

// F16 weights meet F32 activations (as in the reference set); the F16 row converter is exact.
TEST_F(RvvTest, ZvfhF16) {
  if (!riscv::has_zvfh()) GTEST_SKIP() << "this core has no Zvfh";
  const Kernels z = arch_set("rvv_zvfh");
  const DotKernel& dk = z.dot[uint32_t(Type::F16)];
  ASSERT_EQ(dk.act_type, Type::F32);
  for (int64_t n : kLengths) {
    const auto wf = random(n), x = random(n);
    const auto w = quantized(Type::F16, wf);
    std::vector<uint8_t> h(w.size());
    z.from_f32[uint32_t(Type::F16)](wf.data(), h.data(), n);
    ASSERT_EQ(h, w) << "f32 -> f16, n=" << n;
    const auto wd = dequantized(Type::F16, w, n);
    float got = 0;
    dk.vec_dot(n, &got, w.data(), x.data());
    EXPECT_NEAR(got, dot_ref(wd, x), 1e-6 * abs_sum(wd, x)) << "n=" << n;
  }
}

}  // namespace
}  // namespace hart::cpu
