#include "sample/sampler.h"

#include <cmath>
#include <limits>
#include <string>

#include "common/error.h"

namespace hart {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("sampler: " + what);
}

void validate(const SamplerParams& p, int n_vocab) {
  require(n_vocab > 0, "n_vocab must be positive, got " + std::to_string(n_vocab));
  require(!std::isnan(p.temperature), "temperature is NaN");
  require(p.top_p >= 0.0f && p.top_p <= 1.0f, "top_p must be in [0,1], got " + std::to_string(p.top_p));
  require(p.min_p >= 0.0f && p.min_p <= 1.0f, "min_p must be in [0,1], got " + std::to_string(p.min_p));
  require(p.repeat_penalty > 0.0f && std::isfinite(p.repeat_penalty),
          "repeat_penalty must be a positive number, got " + std::to_string(p.repeat_penalty));
  require(p.repeat_last_n >= -1, "repeat_last_n must be >= -1, got " + std::to_string(p.repeat_last_n));
  require(std::isfinite(p.frequency_penalty), "frequency_penalty must be finite");
  require(std::isfinite(p.presence_penalty), "presence_penalty must be finite");
  require(p.top_logprobs >= 0, "top_logprobs must be >= 0");
  require(p.top_logprobs == 0 || p.logprobs, "top_logprobs needs logprobs enabled");
}

uint64_t resolve_seed(uint64_t seed) {
  if (seed != kRandomSeed) return seed;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

std::mt19937 make_rng(uint64_t seed) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  return std::mt19937(seq);
}

// Uniform in [0,1) with 53 random bits, built from raw mt19937 output so the sequence is the same
// with every standard library (std::uniform_real_distribution is implementation-defined).
double uniform01(std::mt19937& rng) {
  const double hi = static_cast<double>(rng() >> 5);  // 27 bits
  const double lo = static_cast<double>(rng() >> 6);  // 26 bits
  return (hi * 67108864.0 + lo) / 9007199254740992.0;
}

bool penalties_active(const SamplerParams& p) {
  return p.repeat_last_n != 0 &&
         (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f);
}

}  // namespace

Sampler::Sampler(const SamplerParams& params, int n_vocab)
    : params_(params), n_vocab_(n_vocab), seed_(0), recent_(params.repeat_last_n) {
  validate(params_, n_vocab_);
  seed_ = resolve_seed(params_.seed);
  rng_ = make_rng(seed_);
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_)  // the message is built only when needed: a step allocates nothing
    require(false, "accepted token " + std::to_string(token) + " is outside the vocabulary of " + std::to_string(n_vocab_));
  recent_.accept(token);
}

void Sampler::reset() {
  recent_.clear();
  rng_ = make_rng(seed_);
  has_logprobs_ = false;
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.size() != static_cast<size_t>(n_vocab_))
    require(false, "got " + std::to_string(logits.size()) + " logits for a vocabulary of " + std::to_string(n_vocab_));

  const std::span<const float> view = penalized(logits);
  const int32_t token = constraint_ ? pick_constrained(view) : pick(view);
  if (params_.logprobs) record_logprobs(logits, token);
  return token;
}

std::span<const float> Sampler::penalized(std::span<const float> logits) {
  if (!penalties_active(params_) || recent_.empty()) return logits;
  penalized_.assign(logits.begin(), logits.end());
  recent_.apply(penalized_, {params_.repeat_penalty, params_.frequency_penalty, params_.presence_penalty});
  return penalized_;
}

void Sampler::distribution(std::span<const float> logits, std::vector<TokenProb>& out) {
  if (logits.size() != static_cast<size_t>(n_vocab_))
    require(false, "got " + std::to_string(logits.size()) + " logits for a vocabulary of " + std::to_string(n_vocab_));
  std::span<const float> view = penalized(logits);
  if (constraint_) {
    masked_.assign(view.begin(), view.end());
    if (constraint_->mask(masked_) == 0) throw Error("sampler: the constraint allows no token here");
    view = masked_;
  }
  out.clear();
  if (params_.temperature <= 0.0f) {
    out.push_back({argmax(view), 1.0f});
    return;
  }
  truncate(view);
  const float top = max_logit(cands_);
  double total = 0.0;
  for (const Candidate& c : cands_) total += std::exp(static_cast<double>(c.logit - top));
  for (const Candidate& c : cands_)
    if (c.logit > -std::numeric_limits<float>::infinity())  // masked by the constraint
      out.push_back({c.id, static_cast<float>(std::exp(static_cast<double>(c.logit - top)) / total)});
}

double Sampler::uniform() { return uniform01(rng_); }

// The chain after the penalties: greedy argmax, or top-k -> top-p -> min-p -> temperature -> draw.
int32_t Sampler::pick(std::span<const float> view) {
  if (params_.temperature <= 0.0f) return argmax(view);
  truncate(view);
  return draw(cands_);
}

void Sampler::truncate(std::span<const float> view) {
  const bool use_top_k = params_.top_k > 0 && params_.top_k < n_vocab_;
  if (use_top_k) {
    top_k_candidates(view, params_.top_k, cands_);
  } else {
    all_candidates(view, cands_);
  }
  if (params_.top_p < 1.0f) top_p_filter(cands_, use_top_k, params_.top_p);
  if (params_.min_p > 0.0f) min_p_filter(cands_, params_.min_p);
  for (Candidate& c : cands_) c.logit /= params_.temperature;
}

int32_t Sampler::pick_constrained(std::span<const float> view) {
  // Without truncation, an unmasked draw that lands on an allowed token is a draw from the
  // masked distribution; with top-k/top-p/min-p it is not (they would cut on unmasked mass).
  const bool truncates = params_.temperature > 0.0f && ((params_.top_k > 0 && params_.top_k < n_vocab_) ||
                                                         params_.top_p < 1.0f || params_.min_p > 0.0f);
  if (!truncates) {
    const int32_t first = pick(view);
    if (constraint_->allows(first)) return first;
  }
  masked_.assign(view.begin(), view.end());
  if (constraint_->mask(masked_) == 0) throw Error("sampler: the constraint allows no token here");
  return pick(masked_);
}

int32_t Sampler::draw(std::span<Candidate> cands) {
  const float top = max_logit(cands);
  double total = 0.0;
  for (const Candidate& c : cands) total += std::exp(static_cast<double>(c.logit - top));
  const double u = uniform01(rng_) * total;
  double cum = 0.0;
  for (const Candidate& c : cands) {
    cum += std::exp(static_cast<double>(c.logit - top));
    if (u < cum) return c.id;
  }
  return cands.back().id;  // u landed in the rounding gap at the very end
}

void Sampler::note_choice(std::span<const float> logits, int32_t token) {
  if (params_.logprobs) record_logprobs(logits, token);
}

void Sampler::record_logprobs(std::span<const float> logits, int32_t token) {
  const float lse = log_sum_exp(logits);
  last_logprob_ = logits[static_cast<size_t>(token)] - lse;
  last_top_.clear();
  if (params_.top_logprobs > 0) {
    std::vector<Candidate> best;
    top_k_candidates(logits, params_.top_logprobs, best);
    for (const Candidate& c : best) last_top_.push_back({c.id, c.logit - lse});
  }
  has_logprobs_ = true;
}

float Sampler::last_logprob() const {
  require(params_.logprobs, "logprobs were not enabled in SamplerParams");
  require(has_logprobs_, "no token has been sampled yet");
  return last_logprob_;
}

std::span<const TokenLogprob> Sampler::last_top_logprobs() const {
  require(params_.logprobs, "logprobs were not enabled in SamplerParams");
  require(has_logprobs_, "no token has been sampled yet");
  return last_top_;
}

}  // namespace hart
