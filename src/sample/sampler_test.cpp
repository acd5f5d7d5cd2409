#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error.h"

namespace hart {
namespace {

SamplerParams plain(float temperature, uint64_t seed = 1234) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

const std::vector<double> kProbs{0.1, 0.5, 0.05, 0.2, 0.15};

std::vector<double> frequencies(Sampler& s, const std::vector<float>& logits, int draws) {
  std::vector<double> f(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i) f[static_cast<size_t>(s.sample(logits))] += 1.0 / draws;
  return f;
}

TEST(Sampler, GreedyTakesTheArgmaxAndTheLowestIdOnTies) {
  for (float t : {0.0f, -1.0f}) {
    Sampler s(plain(t, kRandomSeed), 6);
    EXPECT_EQ(s.sample(std::vector<float>{0.0f, 2.0f, 5.0f, -1.0f, 5.0f, 4.0f}), 2);
    EXPECT_EQ(s.sample(std::vector<float>{9.0f, 2.0f, 5.0f, -1.0f, 5.0f, 9.0f}), 0);
  }
}

TEST(Sampler, PenaltiesChangeTheGreedyChoice) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p, 4);
  const std::vector<float> logits{2.0f, -2.0f, 1.5f, 0.5f};
  EXPECT_EQ(s.sample(logits), 0);
  s.accept(0);  // 2.0 / 2 = 1.0 < 1.5
  EXPECT_EQ(s.sample(logits), 2);
  s.accept(2);  // 1.5 / 2 = 0.75 < 1.0
  EXPECT_EQ(s.sample(logits), 0);
  s.reset();
  EXPECT_EQ(s.sample(logits), 0);
}

TEST(Sampler, PresencePenaltyOutsideTheWindowIsForgotten) {
  SamplerParams p = plain(0.0f);
  p.presence_penalty = 10.0f;
  p.repeat_last_n = 1;
  Sampler s(p, 3);
  const std::vector<float> logits{3.0f, 2.0f, 1.0f};
  s.accept(0);
  EXPECT_EQ(s.sample(logits), 1);
  s.accept(1);  // pushes 0 out of the one-token window
  EXPECT_EQ(s.sample(logits), 0);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDifferent) {
  const std::vector<float> flat(100, 0.0f);
  auto run = [&](uint64_t seed) {
    Sampler s(plain(1.0f, seed), 100);
    std::vector<int32_t> seq;
    for (int i = 0; i < 50; ++i) seq.push_back(s.sample(flat));
    return seq;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(Sampler, ResetRestartsTheRandomSequence) {
  const std::vector<float> flat(100, 0.0f);
  Sampler s(plain(1.0f, kRandomSeed), 100);
  std::vector<int32_t> a, b;
  for (int i = 0; i < 20; ++i) a.push_back(s.sample(flat));
  s.reset();
  for (int i = 0; i < 20; ++i) b.push_back(s.sample(flat));
  EXPECT_EQ(a, b);
  Sampler other(plain(1.0f, kRandomSeed), 100);
  EXPECT_NE(s.seed(), other.seed());  // two random seeds (64 bits) do not collide
}

TEST(Sampler, DrawFrequenciesMatchTheSoftmax) {
  Sampler s(plain(1.0f), 5);
  const std::vector<double> f = frequencies(s, logits_of(kProbs), 40000);
  for (size_t i = 0; i < kProbs.size(); ++i) EXPECT_NEAR(f[i], kProbs[i], 0.01) << "token " << i;
}

TEST(Sampler, TemperatureSharpensTheDistribution) {
  Sampler s(plain(0.5f), 5);  // p^(1/0.5) = p^2, renormalized
  const std::vector<double> f = frequencies(s, logits_of(kProbs), 40000);
  double z = 0.0;
  for (double p : kProbs) z += p * p;
  for (size_t i = 0; i < kProbs.size(); ++i) EXPECT_NEAR(f[i], kProbs[i] * kProbs[i] / z, 0.01);
}

TEST(Sampler, FiltersRestrictAndRenormalizeTheDraws) {
  SamplerParams p = plain(1.0f);
  p.top_k = 3;    // 1, 3, 4
  p.top_p = 0.8f;  // of 0.85 total: 0.5/0.85 + 0.2/0.85 = 0.82 reaches it -> 1, 3
  Sampler s(p, 5);
  const std::vector<double> f = frequencies(s, logits_of(kProbs), 20000);
  EXPECT_EQ(f[0] + f[2] + f[4], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.7, 0.012);
  EXPECT_NEAR(f[3], 0.2 / 0.7, 0.012);

  SamplerParams m = plain(1.0f);
  m.min_p = 0.25f;  // keeps 1, 3, 4
  Sampler sm(m, 5);
  const std::vector<double> fm = frequencies(sm, logits_of(kProbs), 20000);
  EXPECT_EQ(fm[0] + fm[2], 0.0);
  EXPECT_NEAR(fm[4], 0.15 / 0.85, 0.012);
}

TEST(Sampler, LogprobsDescribeTheRawDistribution) {
  SamplerParams p = plain(0.0f);
  p.logprobs = true;
  p.top_logprobs = 2;
  Sampler s(p, 5);
  EXPECT_EQ(s.sample(logits_of(kProbs)), 1);
  EXPECT_NEAR(s.last_logprob(), std::log(0.5), 1e-5);
  const auto top = s.last_top_logprobs();
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_NEAR(top[1].logprob, std::log(0.2), 1e-5);

  Sampler off(plain(0.0f), 5);
  off.sample(logits_of(kProbs));
  EXPECT_THROW(off.last_logprob(), Error);
}

TEST(Sampler, RejectsBadParamsAndInputs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto with = [](auto edit) {
    SamplerParams p;
    edit(p);
    return p;
  };
  EXPECT_THROW(Sampler(with([](SamplerParams& p) { p.top_p = 1.5f; }), 10), Error);
  EXPECT_THROW(Sampler(with([](SamplerParams& p) { p.top_p = -0.1f; }), 10), Error);
  EXPECT_THROW(Sampler(with([&](SamplerParams& p) { p.top_p = nan; }), 10), Error);
  EXPECT_THROW(Sampler(with([&](SamplerParams& p) { p.temperature = nan; }), 10), Error);
  EXPECT_THROW(Sampler(with([&](SamplerParams& p) { p.min_p = nan; }), 10), Error);
  EXPECT_THROW(Sampler(with([](SamplerParams& p) { p.repeat_penalty = 0.0f; }), 10), Error);
  EXPECT_THROW(Sampler(with([](SamplerParams& p) { p.repeat_last_n = -2; }), 10), Error);
  EXPECT_THROW(Sampler(with([](SamplerParams& p) { p.top_logprobs = 3; }), 10), Error);
  EXPECT_THROW(Sampler(SamplerParams{}, 0), Error);
  EXPECT_NO_THROW(Sampler(with([](SamplerParams& p) { p.temperature = -1.0f; }), 10));

  Sampler s(SamplerParams{}, 4);
  EXPECT_THROW(s.sample(std::vector<float>(5, 0.0f)), Error);
  EXPECT_THROW(s.accept(4), Error);
  EXPECT_THROW(s.accept(-1), Error);
}

}  // namespace
}  // namespace hart
