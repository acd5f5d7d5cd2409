// The device kernels behind Qwen 3.5's Gated DeltaNet layers (UNARY SOFTPLUS, GATED_DELTA_NET)
// against the CPU backend's reference kernels computing the same node: random data, odd sizes,
// fewer key heads than value heads, q, k, v as strided views, on 2 and on 32 shires, and the
// launches the kernel must refuse.
#include <cmath>
#include <iterator>
#include <vector>

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

// ---- GATED_DELTA_NET -----------------------------------------------------------------------

struct GdnShape {
  int64_t S, H, H_k, T, n_s;
  bool strided;      // q, k, v views of one row per token (as the model cuts them), else contiguous
  int64_t cells = 0;  // > 0: the states are a store of this many cells, read through I32 cells
};

// Inputs as Qwen 3.5 makes them, keeping the state bounded: q, k of about unit norm (the model
// L2-normalizes them), log-decays g in (-2, 0), beta in (0, 1).
void check_gdn(GdnShape s, uint64_t mask) {
  cpu::test::Bench b(uint32_t(70 + s.S + s.H + s.T));
  const float a = std::sqrt(3.0f / float(s.S));  // uniform in (-a, a): a vector of norm ~1
  Tensor *q, *k, *v;
  if (s.strided) {
    const int64_t row = 2 * s.S * s.H_k + s.S * s.H + 3;  // a gap after v: rows do not touch
    Tensor* mixed = b.random(Type::F32, {row, s.T}, -a, a);
    auto heads = [&](int64_t at, int64_t count) {
      return view(b.ctx, mixed, {s.S, count, s.T}, {size_t(s.S) * 4, mixed->nb[1]}, size_t(at) * 4);
    };
    q = heads(0, s.H_k);
    k = heads(s.S * s.H_k, s.H_k);
    v = heads(2 * s.S * s.H_k, s.H);
  } else {
    q = b.random(Type::F32, {s.S, s.H_k, s.T}, -a, a);
    k = b.random(Type::F32, {s.S, s.H_k, s.T}, -a, a);
    v = b.random(Type::F32, {s.S, s.H, s.T}, -1.0f, 1.0f);
  }
  Tensor* g = b.random(Type::F32, {s.H, s.T}, -2.0f, 0.0f);
  Tensor* beta = b.random(Type::F32, {1, s.H, s.T}, 0.0f, 1.0f);  // ggml's [1, H, T] form
  const auto [state, cells] = initial_states(b, s.S * s.S * s.H, s.n_s, s.cells);
  Tensor* node = gated_delta_net(b.ctx, q, k, v, g, beta, state, cells);
  // The device's s . k is a float sum where the CPU's reference sums in double.
  expect_sources_cpu_result<et_gated_delta_net_params>("gated_delta_net", node, b, mask, 2e-5f);
}

// Qwen 3.5's head size; the tiny test model's two heads.
TEST(EtGatedDeltaNet, Prefill) { check_gdn({128, 2, 2, 5, 1, true}, kSmallMask); }
TEST(EtGatedDeltaNet, Decode) { check_gdn({128, 2, 2, 1, 1, true}, kSmallMask); }
TEST(EtGatedDeltaNet, FewerKeyHeadsThanValueHeads) { check_gdn({32, 6, 2, 6, 3, true}, kSmallMask); }
TEST(EtGatedDeltaNet, ContiguousInputs) { check_gdn({16, 5, 5, 4, 2, false}, kSmallMask); }
TEST(EtGatedDeltaNet, DecodeOfManySequencesOnAll32Shires) { check_gdn({128, 8, 4, 4, 4, true}, kFullMask); }
TEST(EtGatedDeltaNet, PrefillOnAll32Shires) { check_gdn({64, 6, 3, 9, 1, true}, kFullMask); }
// 4 heads of 19 channels: C = 76 rows do not fill cache lines, so one hart runs them all.
TEST(EtGatedDeltaNet, ChannelsThatDoNotFillLines) { check_gdn({19, 4, 2, 6, 2, true}, kSmallMask); }
TEST(EtGatedDeltaNet, FromAStoresCells) { check_gdn({32, 4, 2, 3, 3, true, 7}, kSmallMask); }
TEST(EtGatedDeltaNet, FromAStoresCellsOnAll32Shires) { check_gdn({128, 8, 4, 4, 4, true, 5}, kFullMask); }

et_gated_delta_net_params gdn_block(int64_t S, int64_t H, int64_t H_k, int64_t T, int64_t n_s) {
  Dev& dev = Dev::get();
  auto floats = [&](Shape ne, uint32_t seed) {
    return dev.tensor(random_floats(size_t(ne[0] * ne[1] * ne[2] * ne[3]), seed), Type::F32, ne);
  };
  et_gated_delta_net_params p{};
  p.q = floats({S, H_k, T, 1}, 1);
  p.k = floats({S, H_k, T, 1}, 2);
  p.v = floats({S, H, T, 1}, 3);
  p.g = floats({H, T, 1, 1}, 4);
  p.beta = floats({H, T, 1, 1}, 5);
  p.state = floats({S * S * H, n_s, 1, 1}, 6);
  p.dst = dev.output(Type::F32, {S * H, T + S * n_s, 1, 1});
  return p;
}

TEST(EtGatedDeltaNet, RejectsValueHeadsThatAreNotAMultipleOfKeyHeads) {
  et_gated_delta_net_params p = gdn_block(16, 3, 2, 2, 1);
  expect_rejected("gated_delta_net", p, "gated_delta_net: q and k must be F32 rows [S, H_k, T], H a multiple of H_k");
}

TEST(EtGatedDeltaNet, RejectsKeysOfAnotherSize) {
  et_gated_delta_net_params p = gdn_block(16, 2, 2, 2, 1);
  p.k.ne[0] = 8;  // half rows of keys
  expect_rejected("gated_delta_net", p, "gated_delta_net: q and k must be F32 rows [S, H_k, T], H a multiple of H_k");
}

TEST(EtGatedDeltaNet, RejectsValueRowsThatAreNotContiguous) {
  et_gated_delta_net_params p = gdn_block(16, 2, 2, 2, 1);
  p.v.ne[0] = 8;
  p.v.nb[0] = 8;  // every other float
  expect_rejected("gated_delta_net", p, "gated_delta_net: v must be F32 rows [S, H, T]");
}

TEST(EtGatedDeltaNet, RejectsAGateOfAnotherLength) {
  et_gated_delta_net_params p = gdn_block(16, 2, 2, 2, 1);
  p.g.ne[1] = 1;  // one token's values where there are two
  expect_rejected("gated_delta_net", p, "gated_delta_net: g and beta must be contiguous F32, one value per head and token");
}

TEST(EtGatedDeltaNet, RejectsTokensThatDoNotSplitIntoSequences) {
  et_gated_delta_net_params p = gdn_block(16, 1, 1, 3, 2);
  expect_rejected("gated_delta_net", p,
                  "gated_delta_net: state must be contiguous F32 [S*S*H, n_seqs], T a multiple of n_seqs");
}

TEST(EtGatedDeltaNet, RejectsACellOutsideTheStore) {
  et_gated_delta_net_params p = gdn_block(16, 2, 2, 2, 1);
  p.cells = Dev::get().tensor(std::vector<int32_t>{1}, Type::I32, {1, 1, 1, 1});  // the store has cell 0 alone
  p.has_cells = 1;
  expect_rejected("gated_delta_net", p, "recurrent state: cell index out of range");
}

TEST(EtGatedDeltaNet, RejectsADstWithoutRoomForTheState) {
  et_gated_delta_net_params p = gdn_block(16, 2, 2, 2, 1);
  p.dst.ne[1] = 2;  // y alone
  expect_rejected("gated_delta_net", p, "gated_delta_net: dst must be contiguous F32 [S*H, T + S*n_seqs]");
}

}  // namespace
}  // namespace hart::et::test
