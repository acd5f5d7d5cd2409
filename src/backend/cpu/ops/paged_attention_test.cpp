// PAGED_ATTN against a naive softmax(q·kᵀ·scale)·v over each token's slot list, for batches
// mixing decode tokens (long lists: the split-and-merge path) and prefill chunks (tiles of
// tokens with causal lists), with GQA, odd head sizes, F32 and F16 pools, and 1..4 threads;
// under every kernel set this CPU runs, each also held closely to the reference set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/kernels.h"
#include "backend/cpu/op_test_util.h"
#include "common/error.h"
#include "testing/dense.h"

namespace hart::cpu::test {
namespace {

using testing::Dense;
using testing::read;

struct Seq {
  int n_past, n_new;  // the sequence lists n_past + n_new slots; its new tokens are the last n_new
};

// index: (offset, count) per token, then the lists; slots drawn at random from the pool.
std::vector<int32_t> make_index(const std::vector<Seq>& seqs, int64_t n_slots, std::mt19937& rng) {
  std::vector<int32_t> pairs, lists;
  int n_tok = 0;
  for (const Seq& s : seqs) n_tok += s.n_new;
  for (const Seq& s : seqs) {
    std::vector<int32_t> perm(static_cast<size_t>(n_slots));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const int32_t off = 2 * n_tok + int32_t(lists.size());
    lists.insert(lists.end(), perm.begin(), perm.begin() + s.n_past + s.n_new);
    for (int i = 0; i < s.n_new; i++) {
      pairs.push_back(off);
      pairs.push_back(s.n_past + i + 1);
    }
  }
  pairs.insert(pairs.end(), lists.begin(), lists.end());
  return pairs;
}

Dense naive(const Dense& q, const Dense& k, const Dense& v, const std::vector<int32_t>& index, float scale) {
  const int64_t d = q.ne[0], n_head = q.ne[1], n_tok = q.ne[2], group = n_head / k.ne[1];
  Dense out({v.ne[0], n_head, n_tok, 1});
  for (int64_t t = 0; t < n_tok; t++)
    for (int64_t h = 0; h < n_head; h++) {
      const int32_t off = index[size_t(2 * t)], count = index[size_t(2 * t + 1)];
      std::vector<double> score(static_cast<size_t>(count));
      double mx = -INFINITY, sum = 0;
      for (int32_t j = 0; j < count; j++) {
        const int32_t slot = index[size_t(off + j)];
        double dot = 0;
        for (int64_t i = 0; i < d; i++) dot += q.at(i, h, t) * k.at(i, h / group, slot);
        score[size_t(j)] = dot * scale;
        mx = std::max(mx, score[size_t(j)]);
      }
      for (double& s : score) sum += (s = std::exp(s - mx));
      for (int32_t j = 0; j < count; j++)
        for (int64_t i = 0; i < v.ne[0]; i++)
          out.at(i, h, t) += score[size_t(j)] / sum * v.at(i, h / group, index[size_t(off + j)]);
    }
  return out;
}

struct Case {
  Type kv_type;
  std::vector<Seq> seqs;
  int n_threads;
  int64_t d = 32, dv = 32, n_head = 4, n_head_kv = 2;
};

struct Result {
  Dense got, want;  // want: the naive reference, when asked for
};

// Runs the case under the kernel set in use; the same case always gets the same data.
Result run_case(const Case& c, bool naive_too) {
  Bench b(uint32_t(c.seqs.size() * 31 + size_t(c.n_threads) + size_t(c.d)));
  const int64_t n_slots = 700;
  int64_t n_tok = 0;
  for (const Seq& s : c.seqs) n_tok += s.n_new;
  Tensor* q = b.random(Type::F32, {c.d, c.n_head, n_tok});
  Tensor* k = b.random(c.kv_type, {c.d, c.n_head_kv, n_slots});
  Tensor* v = b.random(c.kv_type, {c.dv, c.n_head_kv, n_slots});
  std::vector<int32_t> index = make_index(c.seqs, n_slots, b.rng());
  const int64_t ne[1] = {int64_t(index.size())};
  Tensor* idx = b.ctx.new_leaf(Type::I32, ne, index.data());
  const float scale = 0.3f;
  Tensor* out = paged_attn(b.ctx, q, k, v, idx, scale);
  b.run({out}, c.n_threads);
  if (!naive_too) return {read(*out), {}};
  return {read(*out), naive(read(*q), read(*k), read(*v), index, scale)};
}

// The parameter is a kernel set's name: every set available_kernels() lists.
class PagedAttention : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { select_kernels(GetParam()); }
  void TearDown() override { select_kernels(available_kernels().back()->name); }

  // Near the naive reference, and nearer still to the reference set (only the order of the
  // sums in dot / axpy / scale may differ).
  void check(const Case& c) {
    const Result r = run_case(c, true);
    expect_near(r.got, r.want, 2e-3, 2e-3);
    if (GetParam() == "ref") return;
    select_kernels("ref");
    const Dense ref = run_case(c, false).got;
    select_kernels(GetParam());
    expect_near(r.got, ref, 1e-5, 1e-4);
  }
};

std::vector<std::string> set_names() {
  std::vector<std::string> names;
  for (const Kernels* k : available_kernels()) names.push_back(k->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EverySet, PagedAttention, ::testing::ValuesIn(set_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST_P(PagedAttention, LoneDecodeTokenSplitsItsListAndMerges) {
  for (int nth : {1, 2, 4}) {
    check({Type::F32, {{600, 1}}, nth});
    check({Type::F16, {{129, 1}}, nth});
  }
}

TEST_P(PagedAttention, ManyDecodeTokensOfDifferentLengths) {
  for (int nth : {1, 3}) check({Type::F16, {{10, 1}, {300, 1}, {0, 1}, {64, 1}, {511, 1}}, nth});
}

TEST_P(PagedAttention, PrefillChunksAttendToTheirPrefixAndCausallyToThemselves) {
  for (int nth : {1, 2}) {
    check({Type::F32, {{0, 40}}, nth});          // a prompt from scratch: tiles of 16, 16, 8
    check({Type::F16, {{100, 20}, {0, 3}}, nth});  // a chunk after a cached prefix, a short prompt
  }
}

TEST_P(PagedAttention, MixedDecodeAndPrefillInOneBatch) {
  for (int nth : {1, 2, 4}) check({Type::F16, {{200, 1}, {30, 17}, {5, 1}, {0, 2}}, nth});
}

// Head sizes that leave vector tails (no multiple of 8 or 16), K and V of different sizes, and
// wide GQA groups (8 query heads per KV head, and 3 with an odd count of KV heads).
TEST_P(PagedAttention, OddHeadSizesAndGroups) {
  check({Type::F16, {{300, 1}, {7, 9}}, 1, 17, 17, 8, 1});
  check({Type::F32, {{90, 1}, {0, 21}}, 2, 72, 40, 9, 3});
  check({Type::F16, {{650, 1}}, 2, 5, 3, 6, 2});
}

TEST(PagedAttentionErrors, EmptyListGivesZeros) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 1});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  std::vector<int32_t> index{2, 0};
  const int64_t ne[1] = {2};
  Tensor* out = paged_attn(b.ctx, q, kv, kv, b.ctx.new_leaf(Type::I32, ne, index.data()), 1.0f);
  b.run({out}, 2);
  for (double x : read(*out).v) EXPECT_EQ(x, 0.0);
}

TEST(PagedAttentionErrors, SlotOutsideThePoolIsAnError) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 1});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  std::vector<int32_t> index{2, 2, 0, 4};
  const int64_t ne[1] = {4};
  Tensor* out = paged_attn(b.ctx, q, kv, kv, b.ctx.new_leaf(Type::I32, ne, index.data()), 1.0f);
  EXPECT_THROW(b.run({out}, 1), Error);
}

TEST(PagedAttentionErrors, BuilderRejectsAShortIndex) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 3});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  Tensor* idx = b.random(Type::I32, {5}, 0, 1);
  EXPECT_THROW(paged_attn(b.ctx, q, kv, kv, idx, 1.0f), Error);
}

}  // namespace
}  // namespace hart::cpu::test
