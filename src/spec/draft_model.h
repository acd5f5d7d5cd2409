// draft-simple: a smaller model of the same vocabulary proposes the tokens, one decode step each
// (llama.cpp's common_speculative_impl_draft_simple). Its session follows the target's sequence:
// the tokens it drafted stay tentative (Session::begin_tentative) until the target has verified
// them, and it keeps those the target accepted.
//
// With a greedy target, the draft is the draft model's argmax at each step; with a sampled target,
// each token is drawn from the draft model's distribution under the target's temperature and
// filters (no penalties), which rejection sampling then corrects towards the target's: more of
// the draft is accepted than of a greedy one where the distributions are flat (Leviathan et al.).
// Drafting stops at a token whose top probability is below p_min (llama.cpp's --spec-draft-p-min).
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "model/session.h"
#include "spec/drafter.h"
#include "tokenizer/tokenizer.h"

namespace hart::spec {

// Whether a draft model's vocabulary is the target's, as llama.cpp checks it
// (common_speculative_are_compatible): the same kind of tokenizer, the same BOS and EOS use and
// ids, vocabulary sizes within 128 of each other, and the same text for every token id from 5 on
// that both have. Throws hart::Error naming the first difference.
void check_compatible(const Tokenizer& target, const Tokenizer& draft);

// A draft model's sessions, kept from one drafter to the next (a session holds a KV store and its
// backends' threads: a server's sequences take one each while they run, and give it back).
// Thread-safe.
class DraftSessions {
 public:
  // `draft` outlives this; `backends` makes each new session's.
  DraftSessions(const Model& draft, const SessionParams& session, std::function<BackendSet()> backends);
  const Model& model() const { return draft_; }
  std::unique_ptr<Session> take();  // a session given back earlier, else a new one
  void give_back(std::unique_ptr<Session> s);

 private:
  const Model& draft_;
  SessionParams params_;
  std::function<BackendSet()> backends_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Session>> free_;
};

class DraftModelDrafter final : public Drafter {
 public:
  // Holds one of `sessions`' sessions until it is destroyed; `target_sampling` is the target's
  // sampler settings; n_vocab_target bounds the token ids it may propose.
  DraftModelDrafter(DraftSessions& sessions, const SamplerParams& target_sampling, int n_vocab_target, float p_min,
                    int n_min);
  ~DraftModelDrafter() override;
  SpecType type() const override { return SpecType::DRAFT_SIMPLE; }
  void draft(std::span<const int32_t> history, int n_max, Draft& out) override;

 private:
  // Brings the session to `history` (keeping the tentative tokens it has in common with it) and
  // returns the logits after its last token.
  std::span<const float> follow(std::span<const int32_t> history);
  // The token drafted from `logits` (its q in `q` when sampled); -1 to stop drafting.
  int32_t pick(std::span<const float> logits, std::vector<TokenProb>& q);

  DraftSessions& sessions_;
  std::unique_ptr<Session> session_;
  std::vector<int32_t> computed_;  // the tokens the session holds, tentative ones included
  Sampler sampler_;                // the target's settings without penalties
  const bool greedy_;
  const int n_vocab_target_;
  const float p_min_;
  const int n_min_;
};

}  // namespace hart::spec
