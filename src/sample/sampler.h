// Token sampling: turns one row of logits into a token id.
//
// The chain and its order follow llama.cpp's default sampler chain:
//   penalties (repeat / frequency / presence over the last repeat_last_n accepted tokens)
//   -> top-k -> top-p -> min-p -> temperature -> draw from the softmax (seeded mt19937).
// temperature <= 0 is greedy decoding: penalties, then argmax (lowest id on ties), no RNG use.
//
// With a TokenConstraint set, tokens it refuses get no probability: the constraint masks the
// logits after the penalties and before top-k. When the chain has no truncation filter (greedy,
// or top-k/top-p/min-p all off) the token is first drawn unmasked and kept if the constraint
// allows it, which gives exactly the masked distribution (p(t)/P(allowed)) at the cost of one
// check; only a refused draw pays for the full mask (llama.cpp's grammar sampler does the same).
//
// A Sampler belongs to one sequence: feed it every token the sequence accepts (prompt tokens
// included, if they should count for the repeat penalty) through accept().
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sample/candidates.h"
#include "sample/recent_tokens.h"
#include "sample/token_constraint.h"

namespace hart {

struct SamplerParams {
  float temperature = 0.8f;   // <= 0: greedy
  int top_k = 40;             // <= 0: disabled
  float top_p = 0.95f;        // in [0,1]; 1: disabled
  float min_p = 0.05f;        // in [0,1]; 0: disabled
  float repeat_penalty = 1.0f;  // > 0; 1: disabled
  int repeat_last_n = 64;     // penalty window; 0: no penalties, -1: everything since reset()
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  uint64_t seed = 0xFFFFFFFF;  // 0xFFFFFFFF: pick one from std::random_device
  // OpenAI-style log-probabilities of the model's distribution (softmax of the raw logits, as
  // llama.cpp's server reports them). Off by default: it costs a pass of exp() over the vocab.
  bool logprobs = false;
  int top_logprobs = 0;  // alternatives recorded per sample; needs logprobs
};

inline constexpr uint64_t kRandomSeed = 0xFFFFFFFF;

struct TokenLogprob {
  int32_t token;
  float logprob;
};

struct TokenProb {
  int32_t token;
  float p;
};

class Sampler {
 public:
  // Throws hart::Error for invalid params (NaN anywhere, top_p/min_p outside [0,1],
  // repeat_penalty <= 0, repeat_last_n < -1, top_logprobs without logprobs) or n_vocab <= 0.
  Sampler(const SamplerParams& params, int n_vocab);

  // logits: (n_vocab,) for the position being predicted. Does not accept() the result.
  int32_t sample(std::span<const float> logits);
  // The distribution sample() draws from for these logits (after the penalties, the constraint,
  // the truncation filters and the temperature): the tokens it may draw with their probabilities,
  // summing to 1; greedy: the argmax alone. What speculative decoding's rejection sampling
  // compares a draft's distribution with.
  void distribution(std::span<const float> logits, std::vector<TokenProb>& out);
  // A uniform draw in [0, 1) from the sampler's RNG (the same stream sample() draws from).
  double uniform();
  void accept(int32_t token);
  // A token drawn from these logits by other means than sample() (speculative decoding's
  // rejection step): its log-probabilities are recorded as sample() records them.
  void note_choice(std::span<const float> logits, int32_t token);
  // Not owned; nullptr to remove. Throws hart::Error from sample() when it allows no token.
  void set_constraint(TokenConstraint* c) { constraint_ = c; }
  // Forgets accepted tokens and restarts the RNG from the seed, so a reset sampler repeats itself.
  void reset();

  const SamplerParams& params() const { return params_; }
  uint64_t seed() const { return seed_; }  // the seed in use (the drawn one if random)

  // Of the last sample() call; throw hart::Error unless params.logprobs.
  float last_logprob() const;
  std::span<const TokenLogprob> last_top_logprobs() const;

 private:
  std::span<const float> penalized(std::span<const float> logits);
  int32_t pick(std::span<const float> logits);
  void truncate(std::span<const float> logits);  // temperature > 0: cands_ after the filters
  int32_t pick_constrained(std::span<const float> logits);
  int32_t draw(std::span<Candidate> cands);
  void record_logprobs(std::span<const float> logits, int32_t token);

  SamplerParams params_;
  int n_vocab_;
  uint64_t seed_;
  std::mt19937 rng_;
  RecentTokens recent_;
  std::vector<float> penalized_;     // (n_vocab,) scratch: logits after penalties
  std::vector<Candidate> cands_;     // scratch: surviving candidates
  std::vector<float> masked_;        // (n_vocab,) scratch: logits after the constraint
  TokenConstraint* constraint_ = nullptr;
  float last_logprob_ = 0.0f;
  std::vector<TokenLogprob> last_top_;
  bool has_logprobs_ = false;
};

}  // namespace hart
