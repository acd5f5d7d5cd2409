#include "spec/ngram_simple.h"

#include <algorithm>

namespace hart::spec {

void ngram_simple_draft(std::span<const int32_t> history, int size_n, int size_m, std::vector<int32_t>& out) {
  out.clear();
  const int64_t len = int64_t(history.size()), n = size_n;
  if (len < n + 1) return;
  const std::span<const int32_t> pattern = history.subspan(size_t(len - n));
  // The latest occurrence that ends before the pattern's own place, so that a token follows it.
  for (int64_t j = len - n - 1; j >= 0; j--) {
    if (!std::equal(pattern.begin(), pattern.end(), history.begin() + j)) continue;
    const int64_t from = j + n, count = std::min<int64_t>(size_m, len - from);
    out.assign(history.begin() + from, history.begin() + from + count);
    return;
  }
}

void NgramSimpleDrafter::draft(std::span<const int32_t> history, int n_max, Draft& out) {
  out.clear();
  ngram_simple_draft(history, size_n_, std::min(size_m_, n_max), out.tokens);
}

}  // namespace hart::spec
