// Speculative decoding of one sequence: each step, a drafter proposes tokens to follow the text
// so far, and the target computes the last sampled token and the draft in one batch (the weights
// read once for them all), keeps the drafted tokens its own sampling agrees with (verify.h) and
// gives the rest back (Session::keep). The text is the target's: token for token the same as
// without speculation when the target samples greedily or a draft is one token for sure, and
// drawn from the target's distribution when a draft model samples (rejection sampling).
#pragma once

#include <functional>
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

  // Binds every drafter to the target's hidden states (Drafter::bind).
  void bind(HiddenRows& target);
  // The first drafter's draft that is not empty, at most n_max tokens.
  void draft(std::span<const int32_t> history, int n_max, Draft& out);
  int max_draft() const { return max_draft_; }
  // Synthetic acceptance: per position, the chance a draft token is kept when the one before it
  // was (empty: the target decides).
  const std::vector<double>& synth_probs() const { return synth_probs_; }
  double synth_uniform();  // its own stream, seeded with a constant: runs repeat themselves

  // Verifies `draft` (k tokens) against the target's k + 1 rows of n_vocab logits: row i predicts
  // draft token i, row k the token after a fully kept draft. Row by row, as long as the target's
  // sampling keeps the draft token (verify.h; synthetic acceptance instead keeps it at random),
  // `keep(x)` is called with it: it accepts x into the sampler (and whatever else produces a
  // token), returning false when the generation ends there. `next` is the target's own token
  // after the kept ones, sampled from the first row that did not keep its draft token, or -1
  // when keep ended the generation.
  struct Verified {
    int n_kept;    // keep() calls
    int32_t next;  // -1: keep returned false
  };
  Verified verify(const Draft& draft, std::span<const float> rows, int n_vocab, Sampler& sampler,
                  const std::function<bool(int32_t)>& is_eog, const std::function<bool(int32_t)>& keep);

 private:
  std::vector<std::unique_ptr<Drafter>> drafters_;
  int max_draft_;
  std::vector<double> synth_probs_;
  std::mt19937 synth_rng_{1234};
  std::vector<TokenProb> p_;  // verify's scratch: the target's distribution of a row
};

// generate() (model/generate.h) with speculation: the same contract and stop rules, and the same
// tokens as its greedy or seeded run; `stats` counts the drafts. `context`: the tokens the
// session holds already (hart chat's earlier turns), which the drafters see before the prompt.
GenerateStats generate(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                       const GenerateOptions& opt, Speculator& spec, SpecStats& stats,
                       std::span<const int32_t> context = {});

}  // namespace hart::spec
