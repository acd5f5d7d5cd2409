#include "model/session.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "model/forward.h"

namespace hart {
namespace {

kv::Capacity session_capacity(const HParams& hp, int n_ctx, int n_batch) {
  // A window layer holds what its next position attends plus one step's tokens.
  return {n_ctx, std::min(n_ctx, hp.sliding_window - 1 + n_batch), 1};
}

}  // namespace

int default_n_ctx(const HParams& hp) { return std::min(hp.n_ctx_train, 4096); }

Session::Session(const Model& model, const SessionParams& params, BackendSet backends)
    : model_(model),
      n_ctx_(params.n_ctx > 0 ? params.n_ctx : default_n_ctx(model.hp)),
      n_batch_(std::max(1, params.n_batch)),
      store_(state_layout(model.hp), session_capacity(model.hp, n_ctx_, n_batch_), params.cache_type),
      executor_(model, store_, n_ctx_, std::move(backends)) {
  // The one sequence's slot lists, and the batch's lists of what its tokens attend, at their
  // longest, taken once: a decode step allocates nothing.
  const kv::Capacity cap = store_.capacity();
  seq_.full.reserve(size_t(cap.full));
  seq_.window.reserve(size_t(cap.window));
  batch_.attn[int(kv::Pool::FULL)].lists.reserve(size_t(cap.full));
  batch_.attn[int(kv::Pool::WINDOW)].lists.reserve(size_t(cap.window));
}

Session::~Session() = default;

std::span<const float> Session::decode(std::span<const int32_t> tokens, bool all_logits) {
  return run(tokens, all_logits, false);
}

std::span<const float> Session::hidden_states(std::span<const int32_t> tokens) { return run(tokens, true, true); }

std::span<const float> Session::run(std::span<const int32_t> tokens, bool all_logits, bool hidden) {
  const int n = int(tokens.size());
  if (n == 0) throw Error("decode called with no tokens");
  if (seq_.n + n > n_ctx_)
    throw Error("context is full: " + std::to_string(seq_.n) + " + " + std::to_string(n) +
                " tokens exceed the context size " + std::to_string(n_ctx_) + " (raise it with --ctx-size)");
  for (int32_t t : tokens)
    if (t < 0 || t >= model_.hp.n_vocab) throw Error("token id " + std::to_string(t) + " is outside the vocabulary");

  logits_.clear();
  std::span<const float> out;
  for (int done = 0; done < n;) {
    const int chunk = std::min(n_batch_, n - done);
    const bool last = done + chunk == n;
    if (!store_.reserve(seq_, chunk)) throw Error("the session's state store is full (a bug: it is sized for n_ctx)");
    batch_.clear();
    batch_.add(seq_, store_.layout(), tokens.subspan(size_t(done), size_t(chunk)),
               all_logits ? Logits::ALL : last ? Logits::LAST : Logits::NONE);
    const ForwardGraph& fg = executor_.forward(batch_, hidden);
    store_.commit(seq_, chunk);
    if (key_rope_.empty()) key_rope_ = key_ropes(fg);
    if (fg.logits) {
      out = {static_cast<const float*>(fg.logits->data), size_t(fg.logits->nelements())};
      if (all_logits && !(done == 0 && last)) logits_.insert(logits_.end(), out.begin(), out.end());
    }
    done += chunk;
  }
  if (!logits_.empty()) out = logits_;
  return out;
}

void Session::shift(int keep, int n_discard) {
  check_repeatable(key_rope_);
  if (!store_.shift(seq_, keep, n_discard, moved_))
    throw Error("context shift: cannot forget " + std::to_string(n_discard) + " positions after the first " +
                std::to_string(keep) + " of " + std::to_string(seq_.n));
  KeyShiftGraph g;
  if (build_key_shift(g, store_, key_rope_, moved_, -n_discard)) executor_.compute(g.graph);
  for (auto& m : moved_) m.clear();
}

int Session::truncate(int n) {
  n = std::clamp(n, 0, seq_.n);
  if (store_.truncate(seq_, n)) return n;
  store_.truncate(seq_, 0);
  return 0;
}

}  // namespace hart
