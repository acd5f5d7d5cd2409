// The device kernels behind the mixture-of-experts block (model/blocks.cpp's moe_ffn): TOP_K,
// MUL_MAT_ID (the mul_mat kernel with ids), DIV, CLAMP and GET_ROWS of router weights, against
// the CPU backend's reference kernels computing the same node: random data, odd sizes, strided
// views, on 2 and on 32 shires, and the launches each kernel must refuse (a bad expert id among
// them).
#include <cmath>
#include <vector>

#include "backend/et/device/kernel_test_util.h"

namespace hart::et::test {
namespace {

// ---- TOP_K ---------------------------------------------------------------------------------

void check_top_k(Tensor* x, int k, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = top_k(b.ctx, x, k);
  et_top_k_params p{};
  p.src = upload(*x);
  expect_cpu_result("top_k", p, node, b, mask, 0.0f);
}

TEST(EtTopK, EightOfSixtyOddRows) {  // OLMoE's 8 of 64 experts, rows that do not fill lines
  cpu::test::Bench b(21);
  check_top_k(b.random(Type::F32, {60, 7}), 8, b, kSmallMask);
}

TEST(EtTopK, WholeRowSorted) {  // k = n: a full descending argsort, positions split over harts
  cpu::test::Bench b(22);
  check_top_k(b.random(Type::F32, {37, 3}), 37, b, kSmallMask);
}

TEST(EtTopK, TiesGoToTheLowerIndex) {
  cpu::test::Bench b(23);
  Tensor* x = b.random(Type::F32, {12, 2});
  auto* v = static_cast<float*>(x->data);
  // Row 0: three equal maxima and -0 next to +0; row 1: every value the same.
  const float row0[12] = {0.5f, 0.9f, -0.0f, 0.9f, 0.0f, 0.1f, 0.9f, -0.5f, 0.0f, -0.0f, 0.2f, -1.0f};
  for (int i = 0; i < 12; i++) {
    v[i] = row0[i];
    v[12 + i] = 0.25f;
  }
  check_top_k(x, 10, b, kSmallMask);
}

TEST(EtTopK, InfinitiesAndAStridedView) {
  cpu::test::Bench b(24);
  Tensor* x = narrow(b, {40, 5, 3}, 33);
  auto* v = static_cast<float*>(x->view_src->data);
  v[3] = INFINITY;
  v[40 + 7] = -INFINITY;
  check_top_k(x, 4, b, kSmallMask);
}

TEST(EtTopK, ManyTokensOnAll32Shires) {  // a prefill of Qwen3-MoE's 128 experts, 8 chosen
  cpu::test::Bench b(25);
  check_top_k(b.random(Type::F32, {128, 97}), 8, b, kFullMask);
}

TEST(EtTopK, RejectsAKLongerThanTheRow) {
  Dev& dev = Dev::get();
  et_top_k_params p{};
  p.src = dev.tensor(random_floats(8, 1), Type::F32, {4, 2, 1, 1});
  p.dst = dev.output(Type::I32, {5, 2, 1, 1});
  expect_rejected("top_k", p, "top_k: k must be in [1, row length]");
}

TEST(EtTopK, RejectsAFloatDst) {
  Dev& dev = Dev::get();
  et_top_k_params p{};
  p.src = dev.tensor(random_floats(8, 1), Type::F32, {4, 2, 1, 1});
  p.dst = dev.output(Type::F32, {2, 2, 1, 1});
  expect_rejected("top_k", p, "top_k: src must be F32 with contiguous rows, dst I32");
}

// ---- MUL_MAT_ID ----------------------------------------------------------------------------

struct MoeCase {
  Type type;
  int64_t k, n, n_expert, n_used, T;
  bool per_slot;  // X (k, n_used, T) (the down projection), else (k, 1, T) (up and gate)
  bool strided;   // ids a view of the first n_used of wider rows
  uint64_t mask;
};

// ids I32 [n_used, T] in [0, n_expert), or a view of such columns of wider rows.
Tensor* expert_ids(cpu::test::Bench& b, const MoeCase& c) {
  const int64_t width = c.strided ? c.n_used + 3 : c.n_used;
  Tensor* all = b.random(Type::I32, {width, c.T}, 0.0f, float(c.n_expert));
  return c.strided ? view(b.ctx, all, {c.n_used, c.T}, {all->nb[1]}, 0) : all;
}

et_mul_mat_params mul_mat_id_params(Tensor* w, Tensor* x, Tensor* ids, Tensor* node) {
  et_mul_mat_params p{};
  p.src0 = upload(*w);
  p.src1 = upload(*x);
  p.ids = upload(*ids);
  p.has_ids = 1;
  p.dst = output_like(*node);
  return p;
}

void check_mul_mat_id(const MoeCase& c) {
  cpu::test::Bench b(uint32_t(50 + c.k + c.n + c.T));
  Tensor* w = b.random(c.type, {c.k, c.n, c.n_expert});
  Tensor* x = b.random(Type::F32, {c.k, c.per_slot ? c.n_used : 1, c.T});
  Tensor* ids = expert_ids(b, c);
  Tensor* node = mul_mat_id(b.ctx, w, x, ids);
  et_mul_mat_params p = mul_mat_id_params(w, x, ids, node);
  // Float sums on the device, double on the CPU (both of the same dequantized weights).
  expect_cpu_result("mul_mat", p, node, b, c.mask, 2e-5f);
}

TEST(EtMulMatId, F32DecodeSharedRow) { check_mul_mat_id({Type::F32, 67, 33, 4, 2, 1, false, false, kSmallMask}); }
TEST(EtMulMatId, F16PerSlotRows) { check_mul_mat_id({Type::F16, 64, 29, 6, 3, 5, true, false, kSmallMask}); }
TEST(EtMulMatId, Q8_0StridedIds) { check_mul_mat_id({Type::Q8_0, 96, 41, 8, 2, 7, false, true, kSmallMask}); }
TEST(EtMulMatId, Q4_0PerSlotStridedIds) { check_mul_mat_id({Type::Q4_0, 64, 37, 5, 4, 3, true, true, kSmallMask}); }
TEST(EtMulMatId, Q4_KEightOfSixteen) { check_mul_mat_id({Type::Q4_K, 256, 19, 16, 8, 2, false, false, kSmallMask}); }
TEST(EtMulMatId, Q8_0PrefillOnAll32Shires) {
  check_mul_mat_id({Type::Q8_0, 64, 515, 8, 2, 9, true, false, kFullMask});
}
TEST(EtMulMatId, F32DecodeOnAll32Shires) { check_mul_mat_id({Type::F32, 33, 1031, 4, 1, 1, false, true, kFullMask}); }

// An id outside [0, n_expert) ends the launch with an error (the graph cannot check data).
void expect_bad_id_error(int32_t bad) {
  cpu::test::Bench b(31);
  Tensor* w = b.random(Type::F32, {16, 8, 4});
  Tensor* x = b.random(Type::F32, {16, 1, 3});
  Tensor* ids = b.random(Type::I32, {2, 3}, 0.0f, 4.0f);
  static_cast<int32_t*>(ids->data)[3] = bad;
  const et_mul_mat_params p = mul_mat_id_params(w, x, ids, mul_mat_id(b.ctx, w, x, ids));
  expect_rejected("mul_mat", p, "mul_mat: expert id out of range");
}

TEST(EtMulMatId, RejectsAnIdPastTheLastExpert) { expect_bad_id_error(4); }
TEST(EtMulMatId, RejectsANegativeId) { expect_bad_id_error(-1); }

TEST(EtMulMatId, RejectsIdsOfAnotherShape) {
  cpu::test::Bench b(32);
  Tensor* w = b.random(Type::F32, {16, 8, 4});
  Tensor* x = b.random(Type::F32, {16, 1, 3});
  Tensor* ids = b.random(Type::I32, {2, 3}, 0.0f, 4.0f);
  et_mul_mat_params p = mul_mat_id_params(w, x, ids, mul_mat_id(b.ctx, w, x, ids));
  p.ids.ne[1] = 2;  // two tokens' ids for three tokens
  expect_rejected("mul_mat", p, "mul_mat: ids must be I32 (U, T) for dst (N, U, T)");
}

// ---- DIV, CLAMP ----------------------------------------------------------------------------

// The router weights' renormalization: w (n_used, T) / sum (1, T), and a full-shape divisor.
void check_div(Tensor* a, Tensor* d, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = div(b.ctx, a, d);
  et_binary_params p{};
  p.src0 = upload(*a);
  p.src1 = upload(*d);
  p.op = ET_BINARY_DIV;
  // x * et_recip(y): within 2 ulp of the CPU's x / y.
  expect_cpu_result("binary", p, node, b, mask, 3e-7f);
}

TEST(EtDiv, RouterWeightsBySumBroadcast) {
  cpu::test::Bench b(33);
  check_div(b.random(Type::F32, {8, 13}, 0.0f, 1.0f), b.random(Type::F32, {1, 13}, 0.5f, 4.0f), b, kSmallMask);
}

TEST(EtDiv, StridedNumeratorSignedDivisorOnAll32Shires) {
  cpu::test::Bench b(34);
  Tensor* den = b.random(Type::F32, {67, 9, 4}, 0.25f, 3.0f);
  auto* v = static_cast<float*>(den->data);
  for (int64_t i = 0; i < den->nelements(); i += 3) v[i] = -v[i];
  check_div(narrow(b, {70, 9, 4}, 67), den, b, kFullMask);
}

void check_clamp(Tensor* x, float lo, float hi, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = clamp(b.ctx, x, lo, hi);
  et_unary_params p{};
  p.src = upload(*x);
  p.act = ET_ACT_CLAMP;
  p.min = lo;
  p.max = hi;
  expect_cpu_result("unary", p, node, b, mask, 0.0f);
}

TEST(EtClamp, SumsToTheSmallestNormalF16) {  // moe_ffn's guard: [6.1e-5, inf)
  cpu::test::Bench b(35);
  Tensor* x = b.random(Type::F32, {1, 37}, -1e-4f, 1e-3f);
  static_cast<float*>(x->data)[5] = INFINITY;
  check_clamp(x, 6.103515625e-5f, INFINITY, b, kSmallMask);
}

TEST(EtClamp, BothBoundsOfAStridedViewOnAll32Shires) {
  cpu::test::Bench b(36);
  check_clamp(narrow(b, {40, 21, 3}, 33), -0.5f, 0.75f, b, kFullMask);
}

TEST(EtClamp, RejectsBoundsOutOfOrder) {
  Dev& dev = Dev::get();
  et_unary_params p{};
  p.src = dev.tensor(random_floats(8, 1), Type::F32, {8, 1, 1, 1});
  p.dst = dev.output(Type::F32, {8, 1, 1, 1});
  p.act = ET_ACT_CLAMP;
  p.min = 1.0f;
  p.max = 0.0f;
  expect_rejected("unary", p, "unary: clamp bounds must satisfy min <= max");
}

// ---- GET_ROWS of router weights ------------------------------------------------------------

void check_get_rows(Tensor* table, Tensor* ids, cpu::test::Bench& b, uint64_t mask) {
  Tensor* node = get_rows(b.ctx, table, ids);
  et_get_rows_params p{};
  p.src = upload(*table);
  p.rows = upload(*ids);
  expect_cpu_result("get_rows", p, node, b, mask, 0.0f);
}

// The chosen experts' probabilities: table (1, E, T) (each token's plane), ids (n_used, T).
TEST(EtGetRows, RouterProbabilitiesPerToken) {
  cpu::test::Bench b(37);
  Tensor* probs = b.random(Type::F32, {60, 11}, 0.0f, 1.0f);
  check_get_rows(reshape(b.ctx, probs, {1, 60, 11}), b.random(Type::I32, {8, 11}, 0.0f, 60.0f), b, kSmallMask);
}

// Per-expert scales: table (1, E), ids (n_used T).
TEST(EtGetRows, ExpertScalesOnAll32Shires) {
  cpu::test::Bench b(38);
  check_get_rows(b.random(Type::F32, {1, 16}), b.random(Type::I32, {2 * 45}, 0.0f, 16.0f), b, kFullMask);
}

}  // namespace
}  // namespace hart::et::test
