// A rule over which tokens may come next (a grammar, a JSON schema), applied by the Sampler
// before its truncation filters. The sampler only asks; whoever owns the sequence advances the
// constraint with each token it accepts.
#pragma once

#include <cstdint>
#include <span>

namespace hart {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Whether `token` may be the next one.
  virtual bool allows(int32_t token) = 0;
  // Sets the logit of every token that may not come next to -infinity; returns how many may.
  virtual int64_t mask(std::span<float> logits) = 0;
};

}  // namespace hart
