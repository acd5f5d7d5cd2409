// The device kernels behind the gemma3 / gemma4 / phi3 / lfm2 graphs (UNARY TANH, CONCAT,
// SSM_CONV, ROPE with frequency factors and attn_factor) against the CPU backend's reference
// kernels computing the same node: random data, odd sizes, strided views as inputs, on 2 and on
// 32 shires.
#include <cstring>
#include <vector>

#include "backend/et/device/kernel_test_util.h"

namespace hart::et::test {
namespace {

// ---- UNARY TANH ----------------------------------------------------------------------------

void check_tanh(Tensor* x, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = unary(b.ctx, x, Unary::TANH);
  et_unary_params p{};
  p.src = upload(*x);
  p.dst = output_like(*node);
  p.act = ET_ACT_TANH;
  Dev::get().run("unary", p, mask);
  expect_near_all(Dev::get().download_f32(p.dst), cpu_result(b, node), 2e-6f);
}

TEST(EtTanh, OddRows) {
  cpu::test::Bench b(1);
  check_tanh(b.random(Type::F32, {37, 9}, -6.0f, 6.0f), b, kSmallMask);
}

TEST(EtTanh, OfAStridedViewOnAll32Shires) {
  cpu::test::Bench b(2);
  check_tanh(narrow(b, {160, 67, 2}, 131), b, kFullMask);
}

// ---- CONCAT --------------------------------------------------------------------------------

// src0 a row-strided view, src1 a permuted (dims 1 and 2 swapped) tensor, joined along dim.
void check_concat(int dim, uint64_t mask) {
  cpu::test::Bench b(10 + uint32_t(dim));
  int64_t na[4] = {13, 5, 3, 2};
  int64_t nbn[4] = {13, 5, 3, 2};
  nbn[dim] = dim == 0 ? 7 : 4;
  Tensor* a = narrow(b, {na[0] + 3, na[1], na[2], na[3]}, na[0]);
  Tensor* b_src = b.random(Type::F32, {nbn[0], nbn[2], nbn[1], nbn[3]});
  Tensor* bp = permute(b.ctx, b_src, 0, 2, 1, 3);
  ASSERT_EQ(bp->ne[1], nbn[1]);
  Tensor* node = concat(b.ctx, a, bp, dim);
  et_concat_params p{};
  p.src0 = upload(*a);
  p.src1 = upload(*bp);
  p.dst = output_like(*node);
  p.dim = dim;
  Dev::get().run("concat", p, mask);
  expect_near_all(Dev::get().download_f32(p.dst), cpu_result(b, node), 0.0f);
}

TEST(EtConcat, Dim0) { check_concat(0, kSmallMask); }
TEST(EtConcat, Dim1) { check_concat(1, kSmallMask); }
TEST(EtConcat, Dim2) { check_concat(2, kSmallMask); }
TEST(EtConcat, Dim3) { check_concat(3, kSmallMask); }
TEST(EtConcat, Dim0OnAll32Shires) { check_concat(0, kFullMask); }
TEST(EtConcat, Dim2OnAll32Shires) { check_concat(2, kFullMask); }

TEST(EtConcat, RejectsShapesThatDoNotJoin) {
  Dev& dev = Dev::get();
  et_concat_params p{};
  p.src0 = dev.tensor(random_floats(8, 1), Type::F32, {4, 2, 1, 1});
  p.src1 = dev.tensor(random_floats(12, 2), Type::F32, {4, 3, 1, 1});
  p.dst = dev.output(Type::F32, {8, 2, 1, 1});
  const std::string err = dev.launch_error("concat", p);
  EXPECT_NE(err.find("concat: shapes do not join along dim"), std::string::npos) << err;
}

// ---- SSM_CONV ------------------------------------------------------------------------------

// channels C, kernel width k, n_t steps of n_s sequences; sx a row-strided view when strided.
void check_ssm_conv(int64_t k, int64_t channels, int64_t n_t, int64_t n_s, bool strided, uint64_t mask) {
  cpu::test::Bench b(uint32_t(20 + k));
  const int64_t len = k - 1 + n_t;
  Tensor* sx = strided ? narrow(b, {len + 5, channels, n_s}, len) : b.random(Type::F32, {len, channels, n_s});
  Tensor* w = b.random(Type::F32, {k, channels});
  Tensor* node = ssm_conv(b.ctx, sx, w);
  et_ssm_conv_params p{};
  p.sx = upload(*sx);
  p.kernel = upload(*w);
  p.dst = output_like(*node);
  Dev::get().run("ssm_conv", p, mask);
  expect_near_all(Dev::get().download_f32(p.dst), cpu_result(b, node), 1e-6f);
}

TEST(EtSsmConv, K4Prefill) { check_ssm_conv(4, 37, 5, 2, false, kSmallMask); }
TEST(EtSsmConv, K2DecodeStridedSx) { check_ssm_conv(2, 45, 1, 3, true, kSmallMask); }
TEST(EtSsmConv, K4DecodeOnAll32Shires) { check_ssm_conv(4, 1031, 1, 1, true, kFullMask); }
TEST(EtSsmConv, K3PrefillOnAll32Shires) { check_ssm_conv(3, 259, 7, 2, false, kFullMask); }

TEST(EtSsmConv, RejectsAKernelWiderThanItsInput) {
  Dev& dev = Dev::get();
  et_ssm_conv_params p{};
  p.sx = dev.tensor(random_floats(6, 1), Type::F32, {3, 2, 1, 1});
  p.kernel = dev.tensor(random_floats(8, 2), Type::F32, {4, 2, 1, 1});
  p.dst = dev.output(Type::F32, {2, 1, 1, 1});
  const std::string err = dev.launch_error("ssm_conv", p);
  EXPECT_NE(err.find("ssm_conv: sx does not fit the kernel"), std::string::npos) << err;
}

// ---- ROPE with frequency factors -----------------------------------------------------------

struct RopeCase {
  RopeMode mode;
  int64_t d;
  int n_dims;
  bool factors, strided;
  float freq_scale, attn_factor;
};

void check_rope(const RopeCase& c, uint64_t mask) {
  cpu::test::Bench b(uint32_t(30 + c.d));
  const int64_t heads = 3, tokens = 5;
  Tensor* x = c.strided ? narrow(b, {c.d + 4, heads, tokens}, c.d) : b.random(Type::F32, {c.d, heads, tokens});
  Tensor* pos = b.random(Type::I32, {tokens}, 0, 4096);
  Tensor* ff = c.factors ? b.random(Type::F32, {c.n_dims / 2}, 1.0f, 40.0f) : nullptr;
  Tensor* node = rope(b.ctx, x, pos, ff, c.mode, c.n_dims, 10000.0f, c.freq_scale, c.attn_factor);
  et_rope_params p{};
  p.src = upload(*x);
  p.pos = upload(*pos);
  p.dst = output_like(*node);
  if (ff) {
    p.freq_factors = upload(*ff);
    p.has_freq_factors = 1;
  }
  p.n_dims = c.n_dims;
  p.mode = int32_t(c.mode);
  p.freq_base = 10000.0f;
  p.freq_scale = c.freq_scale;
  p.attn_factor = c.attn_factor;
  Dev::get().run("rope", p, mask);
  // The device multiplies by 1 / ff_k where the CPU divides: theta may differ in its last bit,
  // which at positions up to 4096 is up to 2.4e-4 rad. Without factors theta is the CPU's.
  expect_near_all(Dev::get().download_f32(p.dst), cpu_result(b, node), c.factors ? 5e-4f : 2e-6f);
}

TEST(EtRopeFactors, Normal) { check_rope({RopeMode::NORMAL, 64, 64, true, false, 1.0f, 1.0f}, kSmallMask); }
TEST(EtRopeFactors, NeoxPartialDimsStrided) {
  check_rope({RopeMode::NEOX, 40, 24, true, true, 0.25f, 1.19f}, kSmallMask);
}
TEST(EtRopeFactors, NormalAttnFactorStrided) {
  check_rope({RopeMode::NORMAL, 22, 18, true, true, 1.0f, 0.7f}, kSmallMask);
}
TEST(EtRopeFactors, NeoxOnAll32Shires) { check_rope({RopeMode::NEOX, 128, 128, true, false, 1.0f, 1.3f}, kFullMask); }
TEST(EtRope, NeoxAttnFactorWithoutFactorsAgainstCpu) {
  check_rope({RopeMode::NEOX, 48, 48, false, true, 1.0f, 1.5f}, kSmallMask);
}

TEST(EtRopeFactors, RejectsTooFewFactors) {
  Dev& dev = Dev::get();
  et_rope_params p{};
  p.src = dev.tensor(random_floats(16, 1), Type::F32, {16, 1, 1, 1});
  p.pos = dev.tensor(std::vector<int32_t>{3}, Type::I32, {1, 1, 1, 1});
  p.dst = dev.output(Type::F32, {16, 1, 1, 1});
  p.freq_factors = dev.tensor(random_floats(4, 2), Type::F32, {4, 1, 1, 1});
  p.has_freq_factors = 1;
  p.n_dims = 16;
  p.freq_base = 10000.0f;
  p.freq_scale = p.attn_factor = 1.0f;
  const std::string err = dev.launch_error("rope", p);
  EXPECT_NE(err.find("rope: freq_factors must be F32 with n_dims / 2 elements"), std::string::npos) << err;
}

}  // namespace
}  // namespace hart::et::test
