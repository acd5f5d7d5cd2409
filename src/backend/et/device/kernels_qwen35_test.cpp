// The device kernels behind Qwen 3.5's Gated DeltaNet layers (UNARY SOFTPLUS) against the CPU
// backend's reference kernels computing the same node: random data, odd sizes, strided views, on
// 2 and on 32 shires.
#include <cmath>
#include <iterator>

#include "backend/et/device/kernel_test_util.h"

namespace hart::et::test {
namespace {

// ---- UNARY SOFTPLUS ------------------------------------------------------------------------

// log(1 + e^x) within a few ulp of the CPU's logf(1 + expf(x)) (relative to max(1, |y|)).
constexpr float kSoftplusTol = 2e-6f;

TEST(EtSoftplus, OddRows) {
  cpu::test::Bench b(60);
  expect_unary(Unary::SOFTPLUS, ET_ACT_SOFTPLUS, b.random(Type::F32, {37, 9}, -12.0f, 12.0f), b, kSmallMask,
               kSoftplusTol);
}

TEST(EtSoftplus, OfAStridedViewOnAll32Shires) {
  cpu::test::Bench b(61);
  expect_unary(Unary::SOFTPLUS, ET_ACT_SOFTPLUS, narrow(b, {140, 21, 2}, 131), b, kFullMask, kSoftplusTol);
}

// Above 20 softplus is x itself: the same as log(1 + e^x) in float up to 88.7, and there e^x
// overflows, where the formula alone would give infinity. Far below, e^x vanishes next to 1.
TEST(EtSoftplus, IsXAbove20AndZeroFarBelow) {
  cpu::test::Bench b(62);
  Tensor* x = b.random(Type::F32, {24}, -1.0f, 1.0f);
  const float edges[] = {19.5f, 20.0f, 20.0001f, 25.0f, 88.0f, 89.0f, 100.0f, 1e30f,
                         -17.0f, -20.0f, -90.0f, -1e30f, INFINITY, -INFINITY};
  for (size_t i = 0; i < std::size(edges); i++) static_cast<float*>(x->data)[i] = edges[i];
  expect_unary(Unary::SOFTPLUS, ET_ACT_SOFTPLUS, x, b, kSmallMask, kSoftplusTol);
}

}  // namespace
}  // namespace hart::et::test
