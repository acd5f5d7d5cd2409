// The device kernels behind the rwkv7 / arwkv7 graphs (NORM with and without its fused weight,
// L2_NORM, SUM_ROWS, UNARY SIGMOID / EXP / NEG / RELU, RWKV_WKV7) against the CPU backend's
// reference kernels computing the same node: random data, odd sizes, strided views as inputs, on
// 2 and on 32 shires, and the launches each kernel must refuse.
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/et/device/kernel_test_util.h"

namespace hart::et::test {
namespace {

// ---- NORM and L2_NORM ----------------------------------------------------------------------

// x's rows normalized by kind (NORM or L2_NORM); with a weight, NORM's fused MUL.
void check_norm(Op kind, Tensor* x, cpu::test::Bench& b, float eps, bool weighted, uint64_t mask) {
  Tensor* node = kind == Op::NORM ? norm(b.ctx, x, eps) : l2_norm(b.ctx, x, eps);
  Tensor* w = weighted ? b.random(Type::F32, {x->ne[0]}, -2.0f, 2.0f) : nullptr;
  Tensor* out = w ? mul(b.ctx, node, w) : node;
  et_norm_params p{};
  p.src = upload(*x);
  p.eps = eps;
  p.kind = kind == Op::NORM ? ET_NORM_MEAN : ET_NORM_L2;
  if (w) {
    p.weight = upload(*w);
    p.has_weight = 1;
  }
  // The device sums in float where the CPU sums in double.
  expect_cpu_result("norm", p, out, b, mask, 2e-5f);
}

TEST(EtNorm, OddRows) {
  cpu::test::Bench b(1);
  check_norm(Op::NORM, b.random(Type::F32, {37, 9}, -3.0f, 5.0f), b, 1e-5f, false, kSmallMask);
}

TEST(EtNorm, FusedWeightOfAStridedView) {
  cpu::test::Bench b(2);
  check_norm(Op::NORM, narrow(b, {70, 11, 3}, 67), b, 64e-5f, true, kSmallMask);
}

TEST(EtNorm, PerHeadRowsOnAll32Shires) {  // RWKV-7's group norm: rows of one head, many heads
  cpu::test::Bench b(3);
  check_norm(Op::NORM, b.random(Type::F32, {64, 12, 7}, -2.0f, 2.0f), b, 64e-5f, false, kFullMask);
}

TEST(EtL2Norm, OddRows) {
  cpu::test::Bench b(4);
  check_norm(Op::L2_NORM, b.random(Type::F32, {29, 13}, -1.0f, 1.0f), b, 1e-12f, false, kSmallMask);
}

TEST(EtL2Norm, StridedViewOnAll32Shires) {
  cpu::test::Bench b(5);
  check_norm(Op::L2_NORM, narrow(b, {72, 9, 5}, 64), b, 1e-12f, false, kFullMask);
}

TEST(EtL2Norm, ARowBelowEpsIsDividedByEps) {
  cpu::test::Bench b(6);
  Tensor* x = b.random(Type::F32, {16, 2}, -1e-8f, 1e-8f);  // |row| ~ 2e-8 < eps
  check_norm(Op::L2_NORM, x, b, 1e-6f, false, kSmallMask);
}

TEST(EtNorm, RejectsAnUnknownKind) {
  Dev& dev = Dev::get();
  et_norm_params p{};
  p.src = dev.tensor(random_floats(8, 1), Type::F32, {8, 1, 1, 1});
  p.dst = dev.output(Type::F32, {8, 1, 1, 1});
  p.kind = 7;
  expect_rejected("norm", p, "norm: kind must be MEAN or L2");
}

TEST(EtNorm, RejectsAWeightOfAnotherLength) {
  Dev& dev = Dev::get();
  et_norm_params p{};
  p.src = dev.tensor(random_floats(16, 1), Type::F32, {8, 2, 1, 1});
  p.weight = dev.tensor(random_floats(4, 2), Type::F32, {4, 1, 1, 1});
  p.has_weight = 1;
  p.dst = dev.output(Type::F32, {8, 2, 1, 1});
  expect_rejected("norm", p, "norm: weight must be F32 rows of the same length");
}

// ---- SUM_ROWS ------------------------------------------------------------------------------

void check_sum_rows(Tensor* x, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = sum_rows(b.ctx, x);
  et_sum_rows_params p{};
  p.src = upload(*x);
  // The same float additions in the same order: the CPU's result exactly.
  expect_cpu_result("sum_rows", p, node, b, mask, 0.0f);
}

TEST(EtSumRows, OddRows) {
  cpu::test::Bench b(7);
  check_sum_rows(b.random(Type::F32, {33, 7, 3}), b, kSmallMask);
}

TEST(EtSumRows, StridedViewOnAll32Shires) {  // RWKV-7's bonus: a sum per head and token
  cpu::test::Bench b(8);
  check_sum_rows(narrow(b, {70, 12, 45}, 64), b, kFullMask);
}

TEST(EtSumRows, RejectsADstOfAnotherShape) {
  Dev& dev = Dev::get();
  et_sum_rows_params p{};
  p.src = dev.tensor(random_floats(12, 1), Type::F32, {4, 3, 1, 1});
  p.dst = dev.output(Type::F32, {3, 1, 1, 1});
  expect_rejected("sum_rows", p, "sum_rows: dst must be (1, rows of src)");
}

// ---- UNARY SIGMOID, EXP, NEG, RELU ---------------------------------------------------------

struct ActCase {
  Unary kind;
  int32_t act;
};

void check_activation(ActCase c, Tensor* x, cpu::test::Bench& b, uint64_t mask) {
  // e^x within a few ulp of expf; NEG and RELU exact.
  expect_unary(c.kind, c.act, x, b, mask, c.kind == Unary::NEG || c.kind == Unary::RELU ? 0.0f : 2e-6f);
}

const ActCase kSigmoid{Unary::SIGMOID, ET_ACT_SIGMOID}, kExp{Unary::EXP, ET_ACT_EXP}, kNeg{Unary::NEG, ET_ACT_NEG},
    kRelu{Unary::RELU, ET_ACT_RELU};

TEST(EtActivation, SigmoidOddRows) {
  cpu::test::Bench b(9);
  check_activation(kSigmoid, b.random(Type::F32, {37, 9}, -12.0f, 12.0f), b, kSmallMask);
}

TEST(EtActivation, SigmoidSaturatesFarOut) {  // e^-x overflows: 1 / (1 + inf) = 0, and 1 above
  cpu::test::Bench b(10);
  Tensor* x = b.random(Type::F32, {20}, -1.0f, 1.0f);
  const float far[] = {-200.0f, -100.0f, -89.0f, 89.0f, 100.0f, 200.0f};
  for (int i = 0; i < 6; i++) static_cast<float*>(x->data)[i] = far[i];
  check_activation(kSigmoid, x, b, kSmallMask);
}

TEST(EtActivation, ExpOfAStridedViewOnAll32Shires) {
  cpu::test::Bench b(11);
  check_activation(kExp, narrow(b, {140, 21, 2}, 131), b, kFullMask);
}

TEST(EtActivation, ExpOfRwkvDecays) {  // RWKV-7's w = e^(-0.606531 sigmoid(.)): arguments in (-0.61, 0)
  cpu::test::Bench b(12);
  check_activation(kExp, b.random(Type::F32, {64, 5}, -0.61f, 0.0f), b, kSmallMask);
}

TEST(EtActivation, NegOddRows) {
  cpu::test::Bench b(13);
  check_activation(kNeg, b.random(Type::F32, {29, 3}, -4.0f, 4.0f), b, kSmallMask);
}

TEST(EtActivation, ReluOfAStridedView) {
  cpu::test::Bench b(14);
  check_activation(kRelu, narrow(b, {50, 7}, 45), b, kSmallMask);
}

// ---- RWKV_WKV7 -----------------------------------------------------------------------------

// S channels per head, H heads, T tokens of n_s sequences; inputs as RWKV-7 makes them: decays w
// in (0.5, 1), a = -kk and b = kk * iclr with kk of unit norm, so the state stays bounded.
// cells > 0: the initial states are a store of that many, read through I32 cells.
void check_wkv7(int64_t S, int64_t H, int64_t T, int64_t n_s, uint64_t mask, int64_t cells = 0) {
  cpu::test::Bench b(uint32_t(40 + S + H + T));
  auto head_vectors = [&](float lo, float hi) { return b.random(Type::F32, {S, H, T}, lo, hi); };
  Tensor* r = head_vectors(-1.0f, 1.0f);
  Tensor* w = head_vectors(0.5f, 1.0f);
  Tensor* k = head_vectors(-1.0f, 1.0f);
  Tensor* v = head_vectors(-1.0f, 1.0f);
  Tensor* kk = l2_norm(b.ctx, head_vectors(-1.0f, 1.0f), 1e-12f);
  Tensor* a = unary(b.ctx, kk, Unary::NEG);
  Tensor* bb = mul(b.ctx, kk, head_vectors(0.0f, 1.0f));
  const auto [state, ids] = initial_states(b, S * S * H, n_s, cells);
  cpu::select_kernels("ref");  // as cpu_result below recomputes them
  b.run_without_reuse({a, bb}, 1);  // the inputs a and b, computed on the CPU
  Tensor* node = rwkv_wkv7(b.ctx, r, w, k, v, a, bb, state, ids);
  // The device's s . a is a float sum where the CPU's reference sums in double.
  expect_sources_cpu_result<et_rwkv_wkv7_params>("rwkv_wkv7", node, b, mask, 2e-5f);
}

TEST(EtRwkvWkv7, Prefill) { check_wkv7(64, 2, 5, 1, kSmallMask); }
TEST(EtRwkvWkv7, Decode) { check_wkv7(64, 3, 1, 1, kSmallMask); }
TEST(EtRwkvWkv7, ThreeSequencesOfTwoTokens) { check_wkv7(16, 5, 6, 3, kSmallMask); }
TEST(EtRwkvWkv7, DecodeOfManySequencesOnAll32Shires) { check_wkv7(64, 12, 4, 4, kFullMask); }
TEST(EtRwkvWkv7, PrefillOnAll32Shires) { check_wkv7(32, 7, 9, 1, kFullMask); }
// 3 heads of 6 channels: C = 18 rows do not fill cache lines, so one hart runs them all.
TEST(EtRwkvWkv7, ChannelsThatDoNotFillLines) { check_wkv7(6, 3, 4, 2, kSmallMask); }
TEST(EtRwkvWkv7, FromAStoresCells) { check_wkv7(16, 5, 6, 3, kSmallMask, 4); }

et_rwkv_wkv7_params wkv7_block(int64_t S, int64_t H, int64_t T, int64_t n_s) {
  Dev& dev = Dev::get();
  et_rwkv_wkv7_params p{};
  et_tensor* in[6] = {&p.r, &p.w, &p.k, &p.v, &p.a, &p.b};
  for (int i = 0; i < 6; i++) *in[i] = dev.tensor(random_floats(size_t(S * H * T), uint32_t(i)), Type::F32, {S, H, T, 1});
  p.state = dev.tensor(random_floats(size_t(S * S * H * n_s), 9), Type::F32, {S * S * H, n_s, 1, 1});
  p.dst = dev.output(Type::F32, {S * H, T + S * n_s, 1, 1});
  return p;
}

TEST(EtRwkvWkv7, RejectsTokensThatDoNotSplitIntoSequences) {
  et_rwkv_wkv7_params p = wkv7_block(16, 1, 3, 2);
  expect_rejected("rwkv_wkv7", p,
                  "rwkv_wkv7: state must be contiguous F32 [S*S*H, n_seqs], T a multiple of n_seqs");
}

TEST(EtRwkvWkv7, RejectsMismatchedHeadVectors) {
  et_rwkv_wkv7_params p = wkv7_block(16, 2, 2, 1);
  p.b.ne[1] = 1;  // one head where r has two
  p.b.nb[2] = p.b.nb[1];
  expect_rejected("rwkv_wkv7", p, "rwkv_wkv7: r, w, k, v, a, b must be contiguous F32 [S, H, T]");
}

TEST(EtRwkvWkv7, RejectsADstWithoutRoomForTheState) {
  et_rwkv_wkv7_params p = wkv7_block(16, 2, 2, 1);
  p.dst.ne[1] = 2;  // y alone
  expect_rejected("rwkv_wkv7", p, "rwkv_wkv7: dst must be contiguous F32 [S*H, T + S*n_seqs]");
}

}  // namespace
}  // namespace hart::et::test
