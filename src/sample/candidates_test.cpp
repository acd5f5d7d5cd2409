#include "sample/candidates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "sample/recent_tokens.h"

namespace hart {
namespace {

// p(id) = {0.1, 0.5, 0.05, 0.2, 0.15}: best-first order is 1, 3, 4, 0, 2.
std::vector<float> hand_built_logits() {
  std::vector<float> l;
  for (double p : {0.1, 0.5, 0.05, 0.2, 0.15}) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

std::vector<int32_t> ids(const std::vector<Candidate>& c) {
  std::vector<int32_t> out;
  for (const Candidate& x : c) out.push_back(x.id);
  return out;
}

TEST(Candidates, TopKKeepsTheBestInOrder) {
  std::vector<Candidate> c;
  top_k_candidates(hand_built_logits(), 2, c);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3}));
  top_k_candidates(hand_built_logits(), 10, c);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3, 4, 0, 2}));
}

TEST(Candidates, TopKMatchesAFullSortWithTies) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 20);  // few distinct values: many ties
  std::vector<float> logits(3000);
  for (float& l : logits) l = static_cast<float>(level(rng)) * 0.5f;
  std::vector<Candidate> ref;
  all_candidates(logits, ref);
  std::sort(ref.begin(), ref.end(), ranks_before);
  ref.resize(57);
  std::vector<Candidate> got;
  top_k_candidates(logits, 57, got);
  EXPECT_EQ(ids(got), ids(ref));
}

TEST(Candidates, TopPKeepsTheShortestPrefixReachingTheMass) {
  for (bool sorted : {false, true}) {
    std::vector<Candidate> c;
    if (sorted) {
      top_k_candidates(hand_built_logits(), 5, c);
    } else {
      all_candidates(hand_built_logits(), c);
    }
    std::vector<Candidate> c2 = c, c3 = c;
    top_p_filter(c, sorted, 0.6f);  // 0.5 < 0.6 <= 0.5 + 0.2
    EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3}));
    top_p_filter(c2, sorted, 0.8f);  // 0.7 < 0.8 <= 0.85
    EXPECT_EQ(ids(c2), (std::vector<int32_t>{1, 3, 4}));
    top_p_filter(c3, sorted, 0.0f);  // always keeps the best
    EXPECT_EQ(ids(c3), (std::vector<int32_t>{1}));
  }
}

TEST(Candidates, TopPOnALargeFlatVocabularyKeepsTheLowestIds) {
  std::vector<float> logits(5000, 0.25f);
  std::vector<Candidate> c;
  all_candidates(logits, c);
  top_p_filter(c, false, 0.5f);
  ASSERT_EQ(c.size(), 2500u);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i].id, static_cast<int32_t>(i));
}

TEST(Candidates, TopPGivesTheSameSetWhetherOrNotTheInputIsSorted) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(20000);
  for (float& l : logits) l = normal(rng);
  logits[123] = -std::numeric_limits<float>::infinity();  // a masked token
  for (float p : {0.3f, 0.9f, 0.999f}) {
    std::vector<Candidate> sorted, unsorted;
    top_k_candidates(logits, static_cast<int>(logits.size()), sorted);
    all_candidates(logits, unsorted);
    top_p_filter(sorted, true, p);
    top_p_filter(unsorted, false, p);
    EXPECT_GT(sorted.size(), 1u);
    EXPECT_EQ(ids(unsorted), ids(sorted)) << "p = " << p;
  }
}

TEST(Candidates, MinPKeepsTokensNearTheBest) {
  std::vector<Candidate> c;
  all_candidates(hand_built_logits(), c);
  std::vector<Candidate> c2 = c;
  min_p_filter(c, 0.25f);  // threshold 0.125: keeps 0.5, 0.2, 0.15 in id order
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3, 4}));
  min_p_filter(c2, 0.35f);  // threshold 0.175
  EXPECT_EQ(ids(c2), (std::vector<int32_t>{1, 3}));
}

TEST(Candidates, ArgmaxTakesTheLowestIndexOnTies) {
  EXPECT_EQ(argmax(std::vector<float>{1.0f, 3.0f, -2.0f, 3.0f}), 1);
  EXPECT_EQ(argmax(std::vector<float>{-5.0f}), 0);
  EXPECT_EQ(argmax(std::vector<float>{NAN, -1.0f, 2.0f, NAN, 2.0f}), 2);
}

TEST(Candidates, LogSumExpIsStable) {
  EXPECT_NEAR(log_sum_exp(std::vector<float>{1000.0f, 1000.0f}), 1000.0f + std::log(2.0f), 1e-3);
  EXPECT_NEAR(log_sum_exp(hand_built_logits()), 0.0f, 1e-6);
}

TEST(RecentTokens, PenalizesOnlyTokensInTheWindowLikeLlamaCpp) {
  RecentTokens recent(3);
  for (int32_t t : {2, 0, 1, 0}) recent.accept(t);  // window keeps 0, 1, 0: token 2 fell out
  std::vector<float> logits{2.0f, -2.0f, 1.0f, 0.5f};
  recent.apply(logits, {2.0f, 0.1f, 0.3f});
  EXPECT_FLOAT_EQ(logits[0], 2.0f / 2.0f - (2 * 0.1f + 0.3f));  // positive: divided
  EXPECT_FLOAT_EQ(logits[1], -2.0f * 2.0f - (0.1f + 0.3f));     // negative: multiplied
  EXPECT_FLOAT_EQ(logits[2], 1.0f);
  EXPECT_FLOAT_EQ(logits[3], 0.5f);
}

TEST(RecentTokens, ZeroWindowRemembersNothingAndClearForgets) {
  RecentTokens none(0);
  none.accept(1);
  EXPECT_TRUE(none.empty());
  RecentTokens all(-1);
  for (int i = 0; i < 1000; ++i) all.accept(0);
  std::vector<float> logits{0.0f};
  all.apply(logits, {1.0f, 0.001f, 0.0f});
  EXPECT_NEAR(logits[0], -1.0f, 1e-5);  // all 1000 occurrences counted
  all.clear();
  EXPECT_TRUE(all.empty());
}

}  // namespace
}  // namespace hart
