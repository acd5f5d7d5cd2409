// A way to propose the tokens that follow a sequence, for the target model to verify in one
// batch: an n-gram lookup in the text so far (ngram_simple.h), a lookup cache (ngram_cache.h), a
// smaller model (draft_model.h), the target's multi-token-prediction block (mtp_drafter.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sample/sampler.h"
#include "spec/spec_params.h"

namespace hart {
class HiddenRows;
}

namespace hart::spec {

struct Draft {
  std::vector<int32_t> tokens;
  // Per token, the distribution it was drawn from (rejection sampling's q); empty when each token
  // is the drafter's only choice (q is 1 on it).
  std::vector<std::vector<TokenProb>> q;

  void clear() { tokens.clear(), q.clear(); }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual SpecType type() const = 0;
  // The target's hidden states of the sequence it drafts for (model/hidden_rows.h; spec::generate
  // binds its session's, the server's engine each sequence's): a drafter that reads them
  // (draft-mtp) keeps them; the others need none.
  virtual void bind(HiddenRows& /*target*/) {}
  // Proposes up to n_max (>= 1) tokens to follow `history`: the sequence so far, whose last token
  // is sampled but not yet computed by the target. Leaves `out` empty when it has none.
  virtual void draft(std::span<const int32_t> history, int n_max, Draft& out) = 0;
};

}  // namespace hart::spec
