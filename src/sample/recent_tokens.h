// The window of recently accepted tokens and the penalties computed from it.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>

namespace hart {

struct PenaltyParams {
  float repeat = 1.0f;     // divides positive logits, multiplies non-positive ones
  float frequency = 0.0f;  // subtracted once per occurrence
  float presence = 0.0f;   // subtracted once if the token occurred at all
};

class RecentTokens {
 public:
  // window: how many of the latest tokens count; -1 = all since clear(), 0 = none.
  explicit RecentTokens(int window) : window_(window) {}

  void accept(int32_t token);
  void clear();
  bool empty() const { return counts_.empty(); }

  // logits (n_vocab,), modified in place for every token in the window. As in llama.cpp the
  // repeat penalty is applied once per distinct token, frequency/presence scale with the count.
  void apply(std::span<float> logits, const PenaltyParams& p) const;

 private:
  int window_;
  std::deque<int32_t> tokens_;
  std::unordered_map<int32_t, int> counts_;
};

}  // namespace hart
