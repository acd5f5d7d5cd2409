// Candidate lists and the truncation filters of the sampling chain (top-k, top-p, min-p).
// Every filter keeps a prefix of the candidates ordered by logit (highest first, lower id first
// on ties) and always keeps at least the best one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hart {

struct Candidate {
  int32_t id;
  float logit;
};

// The strict order every filter uses: higher logit first, then lower id.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// All tokens, in id order (not sorted by logit).
void all_candidates(std::span<const float> logits, std::vector<Candidate>& out);

// The k best tokens, best first; O(n log k) with a bounded heap, no full sort. 0 < k.
void top_k_candidates(std::span<const float> logits, int k, std::vector<Candidate>& out);

// Keeps the shortest best-first prefix whose softmax mass reaches p (mass normalized over the
// current candidates, as llama.cpp's top-p does). Sorts only the tokens it might keep;
// `sorted` says whether cands is already best-first. Leaves the kept prefix sorted.
void top_p_filter(std::vector<Candidate>& cands, bool sorted, float p);

// Keeps the tokens whose probability is at least min_p times the best one's (in logit space:
// logit >= max_logit + log(min_p)). Preserves order.
void min_p_filter(std::vector<Candidate>& cands, float min_p);

// The highest logit among non-empty cands.
float max_logit(std::span<const Candidate> cands);

// Index of the best logit; the lowest index on ties, NaNs passed over (the host CPU's vector
// kernel, cpu::Kernels::argmax: one pass over a vocabulary per greedy token).
int32_t argmax(std::span<const float> logits);

// log(sum(exp(logits))), computed stably.
float log_sum_exp(std::span<const float> logits);

}  // namespace hart
