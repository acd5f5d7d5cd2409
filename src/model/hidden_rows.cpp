#include "model/hidden_rows.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace hart {

void HiddenRows::store(const float* rows, int pos, int n) {
  if (pos > end() || pos + n <= first_) restart(pos);  // not next to the rows held: start again here
  const int skip = std::max(0, first_ - pos);             // positions forgotten already
  rows_.resize(size_t(pos + n - first_) * width_);         // later rows are stale: this step replaced them
  std::copy(rows + size_t(skip) * width_, rows + size_t(n) * width_,
            rows_.begin() + ptrdiff_t(size_t(pos + skip - first_) * width_));
}

void HiddenRows::trim(int n) {
  if (n < first_) return restart(n);
  rows_.resize(std::min(rows_.size(), size_t(n - first_) * width_));
}

void HiddenRows::restart(int pos) {
  rows_.clear();
  first_ = pos;
}

void HiddenRows::forget_before(int pos) {
  const int drop = std::clamp(pos - first_, 0, end() - first_);
  rows_.erase(rows_.begin(), rows_.begin() + ptrdiff_t(size_t(drop) * width_));
  first_ += drop;
}

std::span<const float> HiddenRows::at(int pos) const {
  if (pos < first_ || pos >= end()) throw Error("no hidden state is held for position " + std::to_string(pos));
  return std::span<const float>(rows_).subspan(size_t(pos - first_) * width_, width_);
}

}  // namespace hart
