// Device math (et_math.h) against libm over the ranges the kernels use.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "backend/et/device/et_math.h"
#include "common/fp16.h"

namespace {

// Relative error bound, with an absolute floor for results near zero.
void expect_close(float got, double want, double rel, double abs_floor, const char* what, float x) {
  EXPECT_LE(std::fabs(got - want), std::max(rel * std::fabs(want), abs_floor)) << what << "(" << x << ")";
}

template <class F>
void sweep(float lo, float hi, int n, F check) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int i = 0; i < n; i++) check(u(rng));
}

TEST(EtMath, Reciprocal) {
  sweep(-1e6f, 1e6f, 20000, [](float x) { expect_close(et_recip(x), 1.0 / x, 2e-7, 0, "recip", x); });
  sweep(1e-30f, 1e-20f, 1000, [](float x) { expect_close(et_recip(x), 1.0 / x, 2e-7, 0, "recip", x); });
  EXPECT_EQ(et_recip(0.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(et_recip(-0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(et_recip(std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_FLOAT_EQ(et_div(7.0f, 2.0f), 3.5f);
}

TEST(EtMath, RsqrtAndSqrt) {
  sweep(1e-6f, 1e6f, 20000, [](float x) {
    expect_close(et_rsqrt(x), 1.0 / std::sqrt(double(x)), 3e-7, 0, "rsqrt", x);
    expect_close(et_sqrt(x), std::sqrt(double(x)), 3e-7, 0, "sqrt", x);
  });
  const float tiny = 1e-40f;  // subnormal
  expect_close(et_rsqrt(tiny), 1.0 / std::sqrt(double(tiny)), 3e-7, 0, "rsqrt", tiny);
  EXPECT_EQ(et_sqrt(0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(et_rsqrt(-1.0f)));
}

TEST(EtMath, ExpAndLog) {
  sweep(-87.0f, 88.0f, 20000, [](float x) { expect_close(et_exp(x), std::exp(double(x)), 4e-7, 0, "exp", x); });
  EXPECT_EQ(et_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(et_exp(-100.0f), 0.0f);
  EXPECT_EQ(et_exp(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(et_exp(0.0f), 1.0f);
  sweep(1e-30f, 1e30f, 20000, [](float x) { expect_close(et_log(x), std::log(double(x)), 3e-7, 2e-7, "log", x); });
  sweep(0.5f, 2.0f, 20000, [](float x) { expect_close(et_log(x), std::log(double(x)), 3e-7, 1e-7, "log", x); });
  const float tiny = 1e-42f;  // subnormal
  expect_close(et_log(tiny), std::log(double(tiny)), 3e-7, 0, "log", tiny);
  EXPECT_EQ(et_log(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(et_log(-1.0f)));
}

TEST(EtMath, PowSiluGelu) {
  sweep(0.01f, 100.0f, 5000, [](float x) {
    expect_close(et_pow(x, -0.5f), std::pow(double(x), -0.5), 2e-6, 0, "pow", x);
    expect_close(et_pow(10000.0f, -x / 100.0f), std::pow(10000.0, -x / 100.0), 3e-6, 0, "pow", x);
  });
  EXPECT_EQ(et_pow(0.0f, 2.0f), 0.0f);
  EXPECT_EQ(et_pow(5.0f, 0.0f), 1.0f);
  sweep(-80.0f, 80.0f, 20000, [](float x) {
    expect_close(et_silu(x), x / (1.0 + std::exp(-double(x))), 1e-6, 1e-30, "silu", x);
    const double gelu = 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * double(x) * x * x)));
    expect_close(et_gelu(x), gelu, 2e-6, 1e-7, "gelu", x);
  });
}

// Qwen 3.5's softplus: log(1 + e^x) to a few ulp, where 1 + e^x rounds to 1 an absolute 6e-8;
// x itself above 20, also where e^x overflows.
TEST(EtMath, Softplus) {
  sweep(-30.0f, 20.0f, 20000,
        [](float x) { expect_close(et_softplus(x), std::log1p(std::exp(double(x))), 3e-7, 2e-7, "softplus", x); });
  for (float x : {20.0001f, 50.0f, 89.0f, 1e30f, std::numeric_limits<float>::infinity()}) EXPECT_EQ(et_softplus(x), x);
  EXPECT_EQ(et_softplus(-std::numeric_limits<float>::infinity()), 0.0f);
}

// TANH is an op of its own (Gemma's soft-capping): relative accuracy near zero too.
TEST(EtMath, Tanh) {
  for (float r : {12.0f, 0.6f, 1e-4f}) {
    sweep(-r, r, 20000, [](float x) { expect_close(et_tanh(x), std::tanh(double(x)), 3e-7, 1e-30, "tanh", x); });
  }
  EXPECT_EQ(et_tanh(0.0f), 0.0f);
  EXPECT_EQ(et_tanh(100.0f), 1.0f);
  EXPECT_EQ(et_tanh(-100.0f), -1.0f);
}

// ELU and EXPM1 (relative precision near zero), GELU_ERF.
TEST(EtMath, Expm1AndErf) {
  for (float r : {80.0f, 0.01f, 1e-6f}) {
    sweep(-r, r, 20000, [](float x) { expect_close(et_expm1(x), std::expm1(double(x)), 4e-7, 1e-30, "expm1", x); });
  }
  for (float r : {6.0f, 0.6f, 1e-4f}) {
    sweep(-r, r, 20000, [](float x) { expect_close(et_erf(x), std::erf(double(x)), 2e-6, 2e-7, "erf", x); });
  }
  EXPECT_EQ(et_erf(10.0f), 1.0f);
  EXPECT_EQ(et_erf(-10.0f), -1.0f);
}

// FLOOR, CEIL, ROUND (half away from zero) and TRUNC equal libm's exactly.
TEST(EtMath, Rounding) {
  auto check = [](float x) {
    EXPECT_EQ(et_floor(x), std::floor(x)) << x;
    EXPECT_EQ(et_ceil(x), std::ceil(x)) << x;
    EXPECT_EQ(et_roundf(x), std::round(x)) << x;
    EXPECT_EQ(et_trunc(x), std::trunc(x)) << x;
  };
  sweep(-150.0f, 150.0f, 20000, check);
  sweep(-1e9f, 1e9f, 20000, check);
  for (float x : {0.5f, -0.5f, 1.5f, -2.5f, 0.49999997f, -0.49999997f, 8388607.5f, 8388608.0f, 1e30f, -0.0f})
    check(x);
  EXPECT_EQ(et_floor(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
}

TEST(EtMath, SinCos) {
  sweep(-10000.0f, 10000.0f, 20000, [](float x) {
    float s, c;
    et_sincos(x, &s, &c);
    EXPECT_NEAR(s, std::sin(double(x)), 5e-7 + 2e-7 * std::fabs(x) / 1000) << x;
    EXPECT_NEAR(c, std::cos(double(x)), 5e-7 + 2e-7 * std::fabs(x) / 1000) << x;
  });
}

TEST(EtMath, HalfConversionsMatchGgmlBitForBit) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    const float f = et_f16_to_f32(uint16_t(h));
    const float want = hart::fp16_to_f32(uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f));
    } else {
      ASSERT_EQ(hart::f32_bits(f), hart::f32_bits(want)) << h;
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; i++) {
    const float f = hart::bits_f32(uint32_t(rng()));
    ASSERT_EQ(et_f32_to_f16(f), hart::f32_to_fp16(f)) << f;
  }
}

}  // namespace
