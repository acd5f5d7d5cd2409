#include "sample/recent_tokens.h"

#include <algorithm>

namespace hart {

RecentTokens::RecentTokens(int window) : window_(window) {
  if (window_ > 0) tokens_.reserve(size_t(window_)), counts_.reserve(size_t(window_));
}

void RecentTokens::accept(int32_t token) {
  if (window_ == 0) return;
  auto count = [&](int32_t t) {
    return std::find_if(counts_.begin(), counts_.end(), [t](const auto& c) { return c.first == t; });
  };
  if (window_ > 0 && tokens_.size() == size_t(window_)) {  // the oldest leaves the window
    auto it = count(tokens_[next_]);
    if (--it->second == 0) counts_.erase(it);
    tokens_[next_] = token;
    next_ = (next_ + 1) % tokens_.size();
  } else {
    tokens_.push_back(token);
  }
  if (auto it = count(token); it != counts_.end())
    it->second++;
  else
    counts_.emplace_back(token, 1);
}

void RecentTokens::clear() {
  tokens_.clear();
  next_ = 0;
  counts_.clear();
}

void RecentTokens::apply(std::span<float> logits, const PenaltyParams& p) const {
  for (const auto& [token, count] : counts_) {
    float& l = logits[static_cast<size_t>(token)];
    l = l <= 0.0f ? l * p.repeat : l / p.repeat;
    l -= static_cast<float>(count) * p.frequency + p.presence;
  }
}

}  // namespace hart
