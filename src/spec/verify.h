// Speculative sampling (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
// Decoding"; Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative
// Sampling"): a token x drawn from the draft's distribution q is kept with probability
// min(1, p(x) / q(x)), p being the target's; otherwise the token is drawn from max(0, p - q),
// renormalized. Whatever q is, the token that comes out is distributed as p.
//
// A draft that is one token for sure (q = 1 on x: the n-gram drafters, a greedy draft model)
// makes this "keep x with probability p(x), else draw from p without x", which is exactly what
// drawing from p and comparing with x does; that is how such drafts are verified (the target's
// sampler draws as it would without speculation, so a seed gives the same text either way).
#pragma once

#include <cstdint>
#include <span>

#include "sample/sampler.h"

namespace hart::spec {

struct Verdict {
  int32_t token;
  bool kept;  // token is the drafted x
};

// p, q: the target's and the draft's distributions (tokens with probabilities, any order);
// u_keep, u_draw: uniform draws in [0, 1).
Verdict speculative_sample(std::span<const TokenProb> p, std::span<const TokenProb> q, int32_t x, double u_keep,
                           double u_draw);

}  // namespace hart::spec
