#include "spec/mtp_drafter.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "sample/candidates.h"

namespace hart::spec {
namespace {

constexpr int kTopK = 10;  // llama.cpp's MTP draft sampler: top-k 10, then the best

// The best token and its probability among the top kTopK (llama.cpp's dist after top-k).
std::pair<int32_t, float> best_of_top_k(std::span<const float> logits, std::vector<Candidate>& top) {
  top_k_candidates(logits, kTopK, top);
  double sum = 0.0;
  for (const Candidate& c : top) sum += std::exp(double(c.logit) - double(top[0].logit));
  return {top[0].id, float(1.0 / sum)};
}

}  // namespace

MtpDrafter::MtpDrafter(DraftSessions& sessions, float p_min, int n_min)
    : sessions_(sessions),
      session_(sessions.take()),
      zeros_(size_t(sessions.model().hp.n_embd), 0.0f),
      p_min_(p_min),
      n_min_(n_min) {
  if (!session_->hidden_rows()) throw Error("draft-mtp: the MTP block's session keeps no hidden states (a bug)");
}

MtpDrafter::~MtpDrafter() { sessions_.give_back(std::move(session_)); }

void MtpDrafter::bind(HiddenRows& target) {
  if (&target == target_) return;
  if (target.width() != sessions_.model().hp.n_embd)
    throw Error("draft-mtp: the target's hidden states are not the MTP block's width");
  target_ = &target;
  computed_.clear();
  session_->truncate(0);
}

std::span<const float> MtpDrafter::target_hidden(int p) { return p < 0 ? std::span<const float>(zeros_) : target_->at(p); }

bool MtpDrafter::follow(std::span<const int32_t> history, int n) {
  size_t common = 0;
  while (common < computed_.size() && int(common) < n && computed_[common] == history[common]) common++;
  computed_.resize(size_t(session_->truncate(int(common))));  // attention alone: it goes back to `common`
  const int from = int(computed_.size());
  // The catch-up reads the target's states from position from - 1, the draft that of n - 1.
  if (n > 0 && std::max(from - 1, 0) < target_->first()) return false;
  if (from == n) return true;
  rows_.clear();
  for (int p = from; p < n; p++) {
    const std::span<const float> h = target_hidden(p - 1);
    rows_.insert(rows_.end(), h.begin(), h.end());
  }
  const std::span<const int32_t> todo = history.subspan(size_t(from), size_t(n - from));
  session_->decode_paired(todo, rows_, Logits::NONE);
  computed_.insert(computed_.end(), todo.begin(), todo.end());
  return true;
}

void MtpDrafter::draft(std::span<const int32_t> history, int n_max, Draft& out) {
  out.clear();
  if (!target_)
    throw Error("draft-mtp: the target keeps no hidden states to draft from (SessionParams::keep_hidden)");
  // The last token is sampled, not computed: the target holds the positions before it.
  const int n = int(history.size()) - 1;
  if (n < 0 || target_->end() < n || !follow(history, n)) return;
  const std::span<const float> h0 = target_hidden(n - 1);
  rows_.assign(h0.begin(), h0.end());
  int32_t tok = history.back();
  std::vector<Candidate> top;
  for (int i = 0; i < n_max; i++) {
    const int32_t one[1] = {tok};
    const auto [x, p] = best_of_top_k(session_->decode_paired(one, rows_, Logits::LAST), top);
    if (p < p_min_) break;
    out.tokens.push_back(x);
    if (i + 1 == n_max) break;
    const std::span<const float> h = session_->hidden_rows()->at(session_->n_past() - 1);
    rows_.assign(h.begin(), h.end());
    tok = x;
  }
  session_->truncate(n);  // the draft's positions: computed again from the target's states once verified
  if (n > 0) target_->forget_before(n - 1);
  if (int(out.tokens.size()) < n_min_) out.clear();
}

}  // namespace hart::spec
