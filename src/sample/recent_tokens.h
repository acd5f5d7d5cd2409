// The window of recently accepted tokens and the penalties computed from it.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace hart {

struct PenaltyParams {
  float repeat = 1.0f;     // divides positive logits, multiplies non-positive ones
  float frequency = 0.0f;  // subtracted once per occurrence
  float presence = 0.0f;   // subtracted once if the token occurred at all
};

class RecentTokens {
 public:
  // window: how many of the latest tokens count; -1 = all since clear(), 0 = none. A window's
  // memory is taken here, so that accepting a token allocates nothing.
  explicit RecentTokens(int window);

  void accept(int32_t token);
  void clear();
  bool empty() const { return counts_.empty(); }

  // logits (n_vocab,), modified in place for every token in the window. As in llama.cpp the
  // repeat penalty is applied once per distinct token, frequency/presence scale with the count.
  void apply(std::span<float> logits, const PenaltyParams& p) const;

 private:
  int window_;
  std::vector<int32_t> tokens_;  // with a window: a ring of its tokens, the oldest at next_
  size_t next_ = 0;
  // (token, occurrences) per distinct token: a window holds tens of tokens, so a scan beats a
  // hash map (and takes no memory per token).
  std::vector<std::pair<int32_t, int>> counts_;
};

}  // namespace hart
