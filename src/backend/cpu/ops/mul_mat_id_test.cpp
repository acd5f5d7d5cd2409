// MUL_MAT_ID on every kernel set this CPU runs, against a naive double-precision loop: every
// weight type, n_used 1, 2 and 8, shared and per-slot activations, ids that repeat an expert
// within a token, leave experts out or pick one expert for everything, ids as a strided top_k
// view; the grouped prefill (one GEMM per expert) against one token at a time, and repacked
// experts against their row-major bytes.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/op_test_util.h"
#include "common/error.h"
#include "quant/quant.h"

namespace hart::cpu::test {
namespace {

using testing::Dense;
using testing::read;

// y(:, i, t) = experts(:, :, ids(i, t)) x(:, i % n_b, t), in double.
Dense mul_mat_id_ref(const Tensor* w, const Tensor* x, const Tensor* ids, const Tensor* y) {
  const Dense dw = read(*w), dx = read(*x), di = read(*ids);
  Dense d({y->ne[0], y->ne[1], y->ne[2], 1});
  for (int64_t t = 0; t < y->ne[2]; t++)
    for (int64_t i = 0; i < y->ne[1]; i++)
      for (int64_t n = 0; n < y->ne[0]; n++) {
        const int64_t e = int64_t(di.at(i, t));
        double s = 0.0;
        for (int64_t k = 0; k < w->ne[0]; k++) s += dw.at(k, n, e) * dx.at(k, i % x->ne[1], t);
        d.at(n, i, t) = s;
      }
  return d;
}

// Quantized activations: each product is off by up to ~1/127 of its block's max (|x|, |w| <= 1).
double tolerance(const Kernels& k, Type wt, int64_t len) {
  const Type act = k.dot[size_t(wt)].act_type;
  return act == Type::F32 ? 1e-5 * double(len) : 1e-2 * double(len) / 4;
}

// Random experts [len, n, n_expert] of type t, as a new leaf of b (the same bytes on every call
// with that shape). Each shape is quantized once and shared by every kernel set's instance:
// quantizing random weights (the K-quants' searches) is much of this test's time under QEMU,
// where floating point is emulated.
Tensor* random_experts(Bench& b, Type t, int64_t len, int64_t n, int64_t n_expert) {
  using Made = std::pair<std::unique_ptr<testing::RandomLeaves>, Tensor*>;
  static std::map<std::tuple<Type, int64_t, int64_t, int64_t>, Made> made;
  auto& [leaves, w] = made[{t, len, n, n_expert}];
  if (!leaves) {
    leaves = std::make_unique<testing::RandomLeaves>(7);
    w = leaves->random(t, {len, n, n_expert});
  }
  return b.ctx.new_leaf(t, std::array<int64_t, 4>{len, n, n_expert, 1}, w->data);
}

enum class Ids { RANDOM, REPEATED, ALL_SAME, SKIP_HALF };

// ids [n_used, T] (or a view of the first n_used of wider rows, as top_k's callers see them).
Tensor* make_ids(Bench& b, Ids kind, int64_t n_expert, int64_t n_used, int64_t T, bool strided) {
  const int64_t width = strided ? n_used + 3 : n_used;
  Tensor* all = b.random(Type::I32, {width, T}, 0, float(n_expert));
  auto* v = static_cast<int32_t*>(all->data);
  for (int64_t t = 0; t < T; t++)
    for (int64_t i = 0; i < n_used; i++) {
      int32_t& e = v[t * width + i];
      if (kind == Ids::REPEATED && i > 0) e = v[t * width];  // every slot of a token the same expert
      if (kind == Ids::ALL_SAME) e = int32_t(n_expert - 1);
      if (kind == Ids::SKIP_HALF) e = 2 * (e / 2);  // odd experts are never chosen
    }
  return strided ? view(b.ctx, all, {n_used, T}, {all->nb[1]}, 0) : all;
}

class MulMatId : public ::testing::TestWithParam<const Kernels*> {
 protected:
  void SetUp() override { select_kernels(GetParam()->name); }
  void TearDown() override { select_kernels(available_kernels().back()->name); }
};

TEST_P(MulMatId, EqualsTheNaiveLoop) {
  const Kernels& k = *GetParam();
  struct Case {
    int64_t n_expert, n_used, n_b, T, n;
    Ids ids;
    bool strided;
  };
  const Case cases[] = {
      {4, 1, 1, 1, 33, Ids::RANDOM, false},     // decode, one expert
      {4, 2, 1, 1, 64, Ids::RANDOM, true},      // decode, two, a top_k view
      {16, 8, 1, 1, 64, Ids::RANDOM, false},    // decode, eight (OLMoE / Qwen3-MoE)
      {8, 2, 2, 13, 33, Ids::RANDOM, false},    // per-slot activations (the down projection)
      {8, 8, 8, 70, 64, Ids::SKIP_HALF, true},  // prefill: more rows than a tile, experts left out
      {4, 2, 1, 9, 64, Ids::REPEATED, false},   // a token picking one expert twice
      {6, 2, 2, 21, 33, Ids::ALL_SAME, false},  // every token the same expert
  };
  for (Type t : {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::Q5_0, Type::Q4_K, Type::Q6_K}) {
    if (!can_quantize(t)) continue;
    const int64_t len = type_info(t).block_size == 256 ? 256 : (type_info(t).quantized ? 96 : 65);
    // Two threads take both paths: each thread converting its own copy of a few X rows
    // (decode), and the team converting its share of many (prefill).
    for (const Case& c : cases) {
        const int threads = 2;
        Bench b;
        Tensor* w = random_experts(b, t, len, c.n, c.n_expert);
        w->flags |= kFlagWeight;  // repacked where the set has panels and n fits them
        Tensor* x = b.random(Type::F32, {len, c.n_b, c.T});
        Tensor* ids = make_ids(b, c.ids, c.n_expert, c.n_used, c.T, c.strided);
        Tensor* y = mul_mat_id(b.ctx, w, x, ids);
        b.run({y}, threads);
        SCOPED_TRACE(k.name + " " + std::string(type_name(t)) + " E=" + std::to_string(c.n_expert) + " used=" +
                     std::to_string(c.n_used) + " n_b=" + std::to_string(c.n_b) + " T=" + std::to_string(c.T) +
                     " n=" + std::to_string(c.n) + " threads=" + std::to_string(threads));
        expect_near(read(*y), mul_mat_id_ref(w, x, ids, y), tolerance(k, t, len));
      }
  }
}

// Prefill groups tokens by expert and multiplies each group as one GEMM (packed panels where the
// set has them); decode takes one token: T tokens at once equal T single-token graphs, and
// repacked experts equal their bytes read row by row.
TEST_P(MulMatId, GroupedPrefillEqualsOneTokenAtATime) {
  const Kernels& k = *GetParam();
  for (Type t : {Type::F32, Type::F16, Type::Q8_0, Type::Q4_0, Type::Q4_K}) {
    const int64_t len = type_info(t).block_size == 256 ? 256 : 128, n = 64, E = 8, used = 2, T = 37;
    Bench b;
    Tensor* w = random_experts(b, t, len, n, E);
    Tensor* w_rows = random_experts(b, t, len, n, E);  // the same bytes, not a weight
    w->flags |= kFlagWeight;
    Tensor* x = b.random(Type::F32, {len, 1, T});
    Tensor* ids = make_ids(b, Ids::RANDOM, E, used, T, false);
    Tensor* grouped = mul_mat_id(b.ctx, w, x, ids);
    Tensor* row_major = mul_mat_id(b.ctx, w_rows, x, ids);
    std::vector<Tensor*> outputs{grouped, row_major};  // then one single-token node per token
    for (int64_t tok = 0; tok < T; tok++) {
      Tensor* xt = view(b.ctx, x, {len, 1, 1}, {x->nb[1], x->nb[2]}, size_t(tok) * x->nb[2]);
      Tensor* it = view(b.ctx, ids, {used, 1}, {ids->nb[1]}, size_t(tok) * ids->nb[1]);
      outputs.push_back(mul_mat_id(b.ctx, w, xt, it));
    }
    b.run(outputs, 2);
    const Dense g = read(*grouped), r = read(*row_major);
    // A GEMM may sum the products (or the blocks' scaled integer dots) in another order than the
    // row dot, and fuse other multiply-adds: 1e-6 of sum |w x| (|w|, |x| <= 1).
    const double tol = 1e-6 * double(len);
    SCOPED_TRACE(k.name + " " + std::string(type_name(t)));
    expect_near(g, r, tol);
    for (int64_t tok = 0; tok < T; tok++) {
      const Dense s = read(*outputs[size_t(2 + tok)]);
      for (int64_t i = 0; i < used; i++)
        for (int64_t j = 0; j < n; j++)
          ASSERT_NEAR(s.at(j, i, 0), g.at(j, i, tok), tol) << "token " << tok << " slot " << i << " row " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, MulMatId, ::testing::ValuesIn(available_kernels()),
                         [](const auto& info) { return info.param->name; });

TEST(MulMatIdErrors, ExpertIdOutOfRangeIsAnError) {
  Bench b;
  Tensor* w = b.random(Type::Q8_0, {64, 32, 4});
  Tensor* x = b.random(Type::F32, {64, 1, 3});
  Tensor* ids = b.random(Type::I32, {2, 3}, 0, 4);
  static_cast<int32_t*>(ids->data)[3] = 4;
  Tensor* y = mul_mat_id(b.ctx, w, x, ids);
  try {
    b.run({y}, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expert id 4 is outside 0..3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mul_mat_id(b.ctx, w, b.random(Type::F32, {64, 3, 3}), ids), Error);  // n_b neither 1 nor n_used
  EXPECT_THROW(mul_mat_id(b.ctx, w, b.random(Type::F32, {32, 1, 3}), ids), Error);  // inner sizes differ
}

}  // namespace
}  // namespace hart::cpu::test
