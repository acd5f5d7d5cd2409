// draft-mtp: the target's own multi-token-prediction block proposes the tokens (Qwen 3.5's nextn
// block; llama.cpp's common_speculative_impl_draft_mtp for qwen35). The block runs in a session
// of its own (model/mtp_model.h) with its own K/V: at each position p it takes the token there
// and the target's hidden state after the output norm at p - 1 (zeros before the first), which
// the target keeps (model/hidden_rows.h: a Session's with SessionParams::keep_hidden, the server
// engine's for each sequence). Before drafting it catches up with the
// positions the target has computed since; then, from the last sampled token and the target's
// hidden state before it, each draft step decodes one token and feeds the block's own normed
// output and its argmax to the next step. The draft's positions are given back afterwards: the
// target verifies them, and the next draft computes the kept ones again from the target's states.
//
// The draft is the block's argmax at each step (llama.cpp takes the best of its top 10), one
// token for sure: verification keeps it when the target's sampling draws it, so greedy and
// sampled output are the target's. Drafting stops at a token whose probability among the top 10
// is below p_min (--spec-draft-p-min).
#pragma once

#include <memory>
#include <vector>

#include "model/session.h"
#include "spec/draft_model.h"

namespace hart::spec {

class MtpDrafter final : public Drafter {
 public:
  // Holds one of `sessions`' sessions (of mtp_model(target), with SessionParams::keep_hidden)
  // until it is destroyed.
  MtpDrafter(DraftSessions& sessions, float p_min, int n_min);
  ~MtpDrafter() override;
  SpecType type() const override { return SpecType::DRAFT_MTP; }
  // The target's hidden states it drafts from (a hart::Error when they are not the block's
  // model's width); drafting without them is an error.
  void bind(HiddenRows& target) override;
  void draft(std::span<const int32_t> history, int n_max, Draft& out) override;

 private:
  // Brings the block's K/V to positions [0, n) of `history`; false when the target's hidden
  // states it needs are not held (forgotten, moved by a context shift, or never computed by
  // this target: a prefix it took from a cache).
  bool follow(std::span<const int32_t> history, int n);
  // The target's hidden state at position p, zeros for p = -1.
  std::span<const float> target_hidden(int p);

  DraftSessions& sessions_;
  std::unique_ptr<Session> session_;
  HiddenRows* target_ = nullptr;
  std::vector<int32_t> computed_;  // the tokens of the positions the block's K/V holds
  std::vector<float> rows_;        // the hidden-state inputs of a catch-up or a draft step
  const std::vector<float> zeros_;
  const float p_min_;
  const int n_min_;
};

}  // namespace hart::spec
