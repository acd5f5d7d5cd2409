#include "grammar/grammar_constraint.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sample/sampler.h"

namespace hart::grammar {
namespace {

// A small vocabulary with multi-byte characters split over tokens, a control token ("") and an
// end-of-generation token.
const std::vector<std::string> kPieces = {"{", "}", "\"", "a", "ab", "\"a", "1", "12", " ", "\xC3", "\xA9", "\xC3\xA9",
                                          "", "<eos>", "x", "{\""};
constexpr int32_t kEos = 13;

VocabTrie make_vocab() {
  std::vector<bool> eog(kPieces.size(), false);
  eog[kEos] = true;
  return VocabTrie(kPieces, eog);
}

Sampler greedy(GrammarConstraint& c) {
  SamplerParams p;
  p.temperature = 0.0f;
  Sampler s(p, int(kPieces.size()));
  s.set_constraint(&c);
  return s;
}

std::vector<int32_t> allowed(GrammarConstraint& c) {
  std::vector<float> logits(kPieces.size(), 0.0f);
  const int64_t n = c.mask(logits);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < logits.size(); i++)
    if (std::isfinite(logits[i])) ids.push_back(int32_t(i));
  EXPECT_EQ(n, int64_t(ids.size()));
  for (int32_t id = 0; id < int32_t(kPieces.size()); id++) EXPECT_EQ(c.allows(id), std::isfinite(logits[size_t(id)])) << id;
  return ids;
}

TEST(GrammarConstraint, MaskFollowsTheGrammarThroughTheTrie) {
  const VocabTrie vocab = make_vocab();
  auto g = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "{" "\"" [a-b\u00e9]+ "\"" "}")"));
  GrammarConstraint c(g, vocab);
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{0, 15}));  // "{" and "{\""
  c.accept(15);
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{3, 4, 9, 11}));  // a, ab, the lead byte of é, é
  c.accept(9);
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{10}));  // only the continuation byte
  c.accept(10);
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{2, 3, 4, 9, 11}));
  c.accept(2);
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{1}));
  EXPECT_FALSE(c.complete());
  c.accept(1);
  EXPECT_TRUE(c.complete());
  EXPECT_TRUE(c.finished());
  EXPECT_EQ(allowed(c), (std::vector<int32_t>{kEos}));
  EXPECT_THROW(c.accept(3), Error);
}

TEST(GrammarConstraint, CachedMasksMatchFreshOnes) {
  const VocabTrie vocab = make_vocab();
  auto g = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= [a-b1 ]* "}")"));
  GrammarConstraint cached(g, vocab);
  const auto first = allowed(cached);
  for (int32_t t : {3, 8, 6, 4}) {
    cached.accept(t);
    GrammarConstraint fresh(g, vocab);  // the same state, no cache
    for (int32_t u : {3, 8, 6, 4}) {
      fresh.accept(u);
      if (u == t) break;
    }
    EXPECT_EQ(allowed(cached), allowed(fresh));
    EXPECT_EQ(allowed(cached), first);
  }
}

TEST(GrammarConstraint, SamplerDrawsOnlyAllowedTokens) {
  const VocabTrie vocab = make_vocab();
  auto g = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "1" "2"? "}")"));
  for (const bool truncate : {false, true}) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
      SamplerParams p;
      p.temperature = 1.0f;
      p.top_k = truncate ? 3 : 0;
      p.top_p = 1.0f;
      p.min_p = 0.0f;
      p.seed = seed;
      Sampler s(p, int(kPieces.size()));
      GrammarConstraint c(g, vocab);
      s.set_constraint(&c);
      std::vector<float> logits(kPieces.size(), 0.0f);
      logits[3] = 5.0f;  // the model prefers a token the grammar never allows
      std::string text;
      for (int step = 0; step < 4; step++) {
        const int32_t t = s.sample(logits);
        ASSERT_TRUE(c.allows(t)) << t;
        c.accept(t);
        if (vocab.is_eog(t)) break;
        text += kPieces[size_t(t)];
      }
      EXPECT_TRUE(text == "1}" || text == "12}") << text;
    }
  }
}

TEST(GrammarConstraint, GreedyPicksTheBestAllowedToken) {
  const VocabTrie vocab = make_vocab();
  GrammarConstraint c(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= [a-z]+)")), vocab);
  Sampler s = greedy(c);
  std::vector<float> logits(kPieces.size(), 0.0f);
  logits[0] = 9.0f;   // "{": refused
  logits[14] = 2.0f;  // "x"
  logits[4] = 3.0f;   // "ab": the best allowed
  EXPECT_EQ(s.sample(logits), 4);
}

TEST(GrammarConstraint, NoAllowedTokenIsAnError) {
  // The vocabulary has no token for "z", so nothing can start the grammar.
  const VocabTrie vocab = make_vocab();
  GrammarConstraint c(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "z")")), vocab);
  Sampler s = greedy(c);
  std::vector<float> logits(kPieces.size(), 0.0f);
  EXPECT_THROW(s.sample(logits), Error);
}

}  // namespace
}  // namespace hart::grammar
