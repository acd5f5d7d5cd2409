// PAGED_ATTN against a naive softmax(q·kᵀ·scale)·v over each token's slot list, for batches
// mixing decode tokens (long lists: the split-and-merge path) and prefill chunks (tiles of
// tokens with causal lists), with GQA, F32 and F16 pools, and 1..4 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/op_test_util.h"
#include "common/error.h"

namespace hart::cpu::test {
namespace {

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

void check(Type kv_type, const std::vector<Seq>& seqs, int n_threads) {
  Bench b(uint32_t(seqs.size() * 31 + size_t(n_threads)));
  const int64_t d = 32, n_head = 4, n_head_kv = 2, n_slots = 700;
  int64_t n_tok = 0;
  for (const Seq& s : seqs) n_tok += s.n_new;
  Tensor* q = b.random(Type::F32, {d, n_head, n_tok});
  Tensor* k = b.random(kv_type, {d, n_head_kv, n_slots});
  Tensor* v = b.random(kv_type, {d, n_head_kv, n_slots});
  std::vector<int32_t> index = make_index(seqs, n_slots, b.rng());
  const int64_t ne[1] = {int64_t(index.size())};
  Tensor* idx = b.ctx.new_leaf(Type::I32, ne, index.data());
  const float scale = 0.3f;
  Tensor* out = paged_attn(b.ctx, q, k, v, idx, scale);
  b.run({out}, n_threads);
  expect_near(read(*out), naive(read(*q), read(*k), read(*v), index, scale), 2e-3, 2e-3);
}

TEST(PagedAttention, LoneDecodeTokenSplitsItsListAndMerges) {
  for (int nth : {1, 2, 4}) {
    check(Type::F32, {{600, 1}}, nth);
    check(Type::F16, {{129, 1}}, nth);
  }
}

TEST(PagedAttention, ManyDecodeTokensOfDifferentLengths) {
  for (int nth : {1, 3}) check(Type::F16, {{10, 1}, {300, 1}, {0, 1}, {64, 1}, {511, 1}}, nth);
}

TEST(PagedAttention, PrefillChunksAttendToTheirPrefixAndCausallyToThemselves) {
  for (int nth : {1, 2}) {
    check(Type::F32, {{0, 40}}, nth);          // a prompt from scratch: tiles of 16, 16, 8
    check(Type::F16, {{100, 20}, {0, 3}}, nth);  // a chunk after a cached prefix, a short prompt
  }
}

TEST(PagedAttention, MixedDecodeAndPrefillInOneBatch) {
  for (int nth : {1, 2, 4}) check(Type::F16, {{200, 1}, {30, 17}, {5, 1}, {0, 2}}, nth);
}

TEST(PagedAttention, EmptyListGivesZeros) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 1});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  std::vector<int32_t> index{2, 0};
  const int64_t ne[1] = {2};
  Tensor* out = paged_attn(b.ctx, q, kv, kv, b.ctx.new_leaf(Type::I32, ne, index.data()), 1.0f);
  b.run({out}, 2);
  for (double x : read(*out).v) EXPECT_EQ(x, 0.0);
}

TEST(PagedAttention, SlotOutsideThePoolIsAnError) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 1});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  std::vector<int32_t> index{2, 2, 0, 4};
  const int64_t ne[1] = {4};
  Tensor* out = paged_attn(b.ctx, q, kv, kv, b.ctx.new_leaf(Type::I32, ne, index.data()), 1.0f);
  EXPECT_THROW(b.run({out}, 1), Error);
}

TEST(PagedAttention, BuilderRejectsAShortIndex) {
  Bench b;
  Tensor* q = b.random(Type::F32, {8, 2, 3});
  Tensor* kv = b.random(Type::F32, {8, 1, 4});
  Tensor* idx = b.random(Type::I32, {5}, 0, 1);
  EXPECT_THROW(paged_attn(b.ctx, q, kv, kv, idx, 1.0f), Error);
}

}  // namespace
}  // namespace hart::cpu::test
