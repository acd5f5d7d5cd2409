// Speculative decoding of one sequence: each step, a drafter proposes tokens to follow the text
// so far, and the target computes the last sampled token and the draft in one batch (the weights
// read once for them all), keeps the drafted tokens its own sampling agrees with (verify.h) and
// gives the rest back (Session::keep). The text is the target's: token for token the same as
// without speculation when the target samples greedily or a draft is one token for sure, and
// drawn from the target's distribution when a draft model samples (rejection sampling).
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "model/generate.h"
#include "spec/drafter.h"
#include "spec/spec_params.h"

namespace hart::spec {

// llama-server's timings.draft_n / draft_n_accepted, and the steps that verified a draft.
struct SpecStats {
  int64_t n_drafted = 0;
  int64_t n_accepted = 0;
  int64_t n_verified = 0;
  double acceptance() const { return n_drafted > 0 ? double(n_accepted) / double(n_drafted) : 0.0; }
};

class Speculator {
 public:
  // The drafters in order of priority; params for the draft lengths and synthetic acceptance.
  Speculator(const SpecParams& params, std::vector<std::unique_ptr<Drafter>> drafters);

  // The first drafter's draft that is not empty, at most n_max tokens.
  void draft(std::span<const int32_t> history, int n_max, Draft& out);
  int max_draft() const { return max_draft_; }
  // Synthetic acceptance: per position, the chance a draft token is kept when the one before it
  // was (empty: the target decides).
  const std::vector<double>& synth_probs() const { return synth_probs_; }
  double synth_uniform();  // its own stream, seeded with a constant: runs repeat themselves

 private:
  std::vector<std::unique_ptr<Drafter>> drafters_;
  int max_draft_;
  std::vector<double> synth_probs_;
  std::mt19937 synth_rng_{1234};
};

// generate() (model/generate.h) with speculation: the same contract and stop rules, and the same
// tokens as its greedy or seeded run; `stats` counts the drafts.
GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt, Speculator& spec, SpecStats& stats);

}  // namespace hart::spec
