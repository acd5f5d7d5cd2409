#include "sample/candidates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"

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

namespace {

// Keeps the shortest prefix of best-first `cands` whose weight exp(logit - top), top being the
// best logit, reaches target; all of them when rounding leaves the sum just short.
void cut_sorted_at_mass(std::vector<Candidate>& cands, float top, double target) {
  double cum = 0.0;
  for (size_t i = 0; i < cands.size(); ++i) {
    cum += std::exp(static_cast<double>(cands[i].logit - top));
    if (cum >= target) {
      cands.resize(i + 1);
      return;
    }
  }
}

}  // namespace

void top_p_filter(std::vector<Candidate>& cands, bool sorted, float p) {
  if (cands.empty()) return;
  float top = -std::numeric_limits<float>::infinity();
  float min_logit = std::numeric_limits<float>::infinity();
  for (const Candidate& c : cands) {
    top = std::max(top, c.logit);
    if (std::isfinite(c.logit)) min_logit = std::min(min_logit, c.logit);
  }
  // Bucket the tokens by logit (one bucket when already sorted): the mass per bucket gives the
  // total, and the bucket where the running mass reaches the target bounds what must be sorted,
  // so an unsorted 152k vocabulary is not sorted whole.
  constexpr int kBuckets = 1024;
  const int buckets = sorted ? 1 : kBuckets;
  const float range = top - min_logit;
  const float scale = range > 0.0f ? static_cast<float>(buckets - 1) / range : 0.0f;
  auto bucket_of = [&](float logit) {
    return static_cast<int>(std::min<float>(static_cast<float>(buckets - 1), (top - logit) * scale));
  };
  std::array<double, kBuckets> mass{};  // on the stack: sampling a token allocates nothing
  for (const Candidate& c : cands) mass[bucket_of(c.logit)] += std::exp(static_cast<double>(c.logit - top));
  double total = 0.0;
  for (double m : mass) total += m;
  const double target = static_cast<double>(p) * total;
  if (sorted) return cut_sorted_at_mass(cands, top, target);

  int last = 0;
  for (double cum = mass[0]; cum < target && last < buckets - 1;) cum += mass[++last];

  const auto head_end = std::partition(cands.begin(), cands.end(),
                                       [&](const Candidate& c) { return bucket_of(c.logit) <= last; });
  cands.erase(head_end, cands.end());
  std::sort(cands.begin(), cands.end(), ranks_before);
  cut_sorted_at_mass(cands, top, target);
}

void min_p_filter(std::vector<Candidate>& cands, float min_p) {
  if (cands.empty()) return;
  const float threshold = max_logit(cands) + std::log(min_p);
  std::erase_if(cands, [threshold](const Candidate& c) { return c.logit < threshold; });
}

float max_logit(std::span<const Candidate> cands) {
  float best = cands.front().logit;
  for (const Candidate& c : cands) best = std::max(best, c.logit);
  return best;
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(cpu::kernels().argmax(static_cast<int64_t>(logits.size()), logits.data()));
}

float log_sum_exp(std::span<const float> logits) {
  const float top = logits[static_cast<size_t>(argmax(logits))];
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - top));
  return top + static_cast<float>(std::log(sum));
}

}  // namespace hart
