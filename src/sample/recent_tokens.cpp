#include "sample/recent_tokens.h"

namespace hart {

void RecentTokens::accept(int32_t token) {
  if (window_ == 0) return;
  tokens_.push_back(token);
  ++counts_[token];
  if (window_ > 0 && tokens_.size() > static_cast<size_t>(window_)) {
    auto it = counts_.find(tokens_.front());
    if (--it->second == 0) counts_.erase(it);
    tokens_.pop_front();
  }
}

void RecentTokens::clear() {
  tokens_.clear();
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
