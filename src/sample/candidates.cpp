#include "sample/candidates.h"

#include <algorithm>
#include <cmath>

namespace hart {

void all_candidates(std::span<const float> logits, std::vector<Candidate>& out) {
  out.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = {static_cast<int32_t>(i), logits[i]};
}

void top_k_candidates(std::span<const float> logits, int k, std::vector<Candidate>& out) {
  // A heap whose front is the worst of the k kept so far: most tokens lose one comparison.
  const size_t kk = std::min(static_cast<size_t>(k), logits.size());
  out.clear();
  out.reserve(kk);
  for (size_t i = 0; i < logits.size(); ++i) {
    const Candidate c{static_cast<int32_t>(i), logits[i]};
    if (out.size() < kk) {
      out.push_back(c);
      std::push_heap(out.begin(), out.end(), ranks_before);
    } else if (ranks_before(c, out.front())) {
      std::pop_heap(out.begin(), out.end(), ranks_before);
      out.back() = c;
      std::push_heap(out.begin(), out.end(), ranks_before);
    }
  }
  std::sort_heap(out.begin(), out.end(), ranks_before);
}

void top_p_filter(std::vector<Candidate>& cands, bool sorted, float p) {
  if (cands.empty()) return;
  float max_logit = cands.front().logit;
  for (const Candidate& c : cands) max_logit = std::max(max_logit, c.logit);
  double total = 0.0;
  for (const Candidate& c : cands) total += std::exp(static_cast<double>(c.logit - max_logit));
  const double target = static_cast<double>(p) * total;

  // Sort a growing head of the list until it holds the mass: with a peaked distribution a few
  // hundred of 152k tokens suffice, so the full sort is rarely paid.
  const size_t n = cands.size();
  size_t head = sorted ? n : std::min<size_t>(n, 256);
  for (;;) {
    if (!sorted) std::partial_sort(cands.begin(), cands.begin() + head, cands.end(), ranks_before);
    double cum = 0.0;
    for (size_t i = 0; i < head; ++i) {
      cum += std::exp(static_cast<double>(cands[i].logit - max_logit));
      if (cum >= target) {
        cands.resize(i + 1);
        return;
      }
    }
    if (head == n) return;  // rounding left the mass just short of p: keep everything
    head = std::min(n, head * 8);
  }
}

void min_p_filter(std::vector<Candidate>& cands, float min_p) {
  if (cands.empty()) return;
  float max_logit = cands.front().logit;
  for (const Candidate& c : cands) max_logit = std::max(max_logit, c.logit);
  const float threshold = max_logit + std::log(min_p);
  std::erase_if(cands, [threshold](const Candidate& c) { return c.logit < threshold; });
}

int32_t argmax(std::span<const float> logits) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

float log_sum_exp(std::span<const float> logits) {
  const float max_logit = logits[static_cast<size_t>(argmax(logits))];
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - max_logit));
  return max_logit + static_cast<float>(std::log(sum));
}

}  // namespace hart
