#include "spec/draft_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "sample/candidates.h"

namespace hart::spec {
namespace {

constexpr int kMaxVocabDifference = 128;  // llama.cpp's SPEC_VOCAB_MAX_SIZE_DIFFERENCE
constexpr int kFirstCheckedToken = 5;     // SPEC_VOCAB_CHECK_START_TOKEN_ID

SamplerParams draft_sampling(SamplerParams p) {
  p.repeat_penalty = 1.0f, p.frequency_penalty = 0.0f, p.presence_penalty = 0.0f;
  p.logprobs = false, p.top_logprobs = 0;
  if (p.seed != kRandomSeed) p.seed ^= 0x9E3779B97F4A7C15ull;  // its own stream, reproducible with the target's seed
  return p;
}

}  // namespace

void check_compatible(const Tokenizer& target, const Tokenizer& draft) {
  const auto fail = [](const std::string& what) {
    throw Error("the draft model's vocabulary is not the target's: " + what);
  };
  if (target.kind() != draft.kind()) fail("another kind of tokenizer");
  if (target.add_bos() != draft.add_bos() || (target.add_bos() && target.bos() != draft.bos()))
    fail("BOS differs (target " + std::to_string(target.bos()) + ", draft " + std::to_string(draft.bos()) + ")");
  if (target.add_eos() != draft.add_eos() || (target.add_eos() && target.eos() != draft.eos()))
    fail("EOS differs (target " + std::to_string(target.eos()) + ", draft " + std::to_string(draft.eos()) + ")");
  const int nt = target.n_vocab(), nd = draft.n_vocab();
  if (std::abs(nt - nd) > kMaxVocabDifference)
    fail(std::to_string(nt) + " tokens against the draft's " + std::to_string(nd) + " (at most " +
         std::to_string(kMaxVocabDifference) + " apart)");
  for (int i = kFirstCheckedToken; i < std::min(nt, nd); i++)
    if (target.token_text(i) != draft.token_text(i))
      fail("token " + std::to_string(i) + " is '" + target.token_text(i) + "' in the target, '" + draft.token_text(i) +
           "' in the draft");
}

DraftSessions::DraftSessions(const Model& draft, const SessionParams& session, std::function<BackendSet()> backends)
    : draft_(draft), params_(session), backends_(std::move(backends)) {
  params_.speculative = true;  // its drafted tokens stay tentative until the target has verified them
}

std::unique_ptr<Session> DraftSessions::take() {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      std::unique_ptr<Session> s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
  }
  return std::make_unique<Session>(draft_, params_, backends_());
}

void DraftSessions::give_back(std::unique_ptr<Session> s) {
  std::lock_guard lock(mutex_);
  free_.push_back(std::move(s));
}

DraftModelDrafter::DraftModelDrafter(DraftSessions& sessions, const SamplerParams& target_sampling, int n_vocab_target,
                                     float p_min, int n_min)
    : sessions_(sessions),
      session_(sessions.take()),
      sampler_(draft_sampling(target_sampling), sessions.model().hp.n_vocab),
      greedy_(target_sampling.temperature <= 0.0f),
      n_vocab_target_(n_vocab_target),
      p_min_(p_min),
      n_min_(n_min) {}

DraftModelDrafter::~DraftModelDrafter() { sessions_.give_back(std::move(session_)); }

std::span<const float> DraftModelDrafter::follow(std::span<const int32_t> history) {
  // The tokens the session holds that the history starts with; the last one is computed again
  // in any case, for its logits.
  size_t common = 0;
  while (common < computed_.size() && common + 1 < history.size() && computed_[common] == history[common]) common++;
  if (session_->tentative()) session_->keep(std::max(0, int(common) - session_->n_kept()));
  if (int(common) < session_->n_past()) session_->truncate(int(common));  // 0 where the state cannot go back
  computed_.resize(size_t(session_->n_past()));
  const std::span<const int32_t> todo = history.subspan(computed_.size());
  computed_.insert(computed_.end(), todo.begin(), todo.end());
  return session_->decode(todo);
}

int32_t DraftModelDrafter::pick(std::span<const float> logits, std::vector<TokenProb>& q) {
  int32_t x = -1;
  float p_top = 1.0f;
  if (greedy_) {
    x = argmax(logits);
    if (p_min_ > 0.0f) p_top = std::exp(logits[size_t(x)] - log_sum_exp(logits));
  } else {
    sampler_.distribution(logits, q);
    p_top = 0.0f;
    for (const TokenProb& c : q) p_top = std::max(p_top, c.p);
    double u = sampler_.uniform();
    x = q.back().token;
    for (const TokenProb& c : q) {
      if (u < c.p) {
        x = c.token;
        break;
      }
      u -= c.p;
    }
  }
  return p_top < p_min_ || x >= n_vocab_target_ ? -1 : x;
}

void DraftModelDrafter::draft(std::span<const int32_t> history, int n_max, Draft& out) {
  out.clear();
  std::span<const float> logits = follow(history);
  session_->begin_tentative();  // what follows is kept only as far as the target accepts it
  std::vector<TokenProb> q;
  for (int i = 0; i < n_max; i++) {
    const int32_t x = pick(logits, q);
    if (x < 0) break;
    out.tokens.push_back(x);
    if (!greedy_) out.q.push_back(q);
    if (i + 1 == n_max) break;
    const int32_t one[1] = {x};
    logits = session_->decode(one);
    computed_.push_back(x);
  }
  if (int(out.tokens.size()) < n_min_) out.clear();
}

}  // namespace hart::spec
