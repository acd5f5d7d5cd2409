// llama.cpp's ngram-simple drafting (common/ngram-map.cpp, common_ngram_simple_draft): the last
// size_n tokens of the history are looked for earlier in it, and the tokens that followed their
// latest earlier occurrence (at most size_m) are the draft. Free, and right as often as the text
// repeats itself (code edits, quoting the prompt, lists).
#pragma once

#include "spec/drafter.h"

namespace hart::spec {

// The draft after the latest earlier occurrence of history's last size_n tokens; empty without one.
void ngram_simple_draft(std::span<const int32_t> history, int size_n, int size_m, std::vector<int32_t>& out);

class NgramSimpleDrafter final : public Drafter {
 public:
  NgramSimpleDrafter(int size_n, int size_m) : size_n_(size_n), size_m_(size_m) {}
  SpecType type() const override { return SpecType::NGRAM_SIMPLE; }
  void draft(std::span<const int32_t> history, int n_max, Draft& out) override;

 private:
  int size_n_, size_m_;
};

}  // namespace hart::spec
