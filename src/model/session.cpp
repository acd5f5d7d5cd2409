#include "model/session.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "model/forward.h"

namespace hart {
namespace {

kv::Capacity session_capacity(const HParams& hp, int n_ctx, int n_batch, bool speculative) {
  // A window layer holds what its next position attends plus one step's tokens.
  return {n_ctx, std::min(n_ctx, hp.sliding_window - 1 + n_batch), speculative ? 2 : 1};
}

}  // namespace

int default_n_ctx(const HParams& hp) { return std::min(hp.n_ctx_train, 4096); }

Session::Session(const Model& model, const SessionParams& params, BackendSet backends)
    : model_(model),
      n_ctx_(params.n_ctx > 0 ? params.n_ctx : default_n_ctx(model.hp)),
      n_batch_(std::max(1, params.n_batch)),
      store_(state_layout(model.hp), session_capacity(model.hp, n_ctx_, n_batch_, params.speculative), params.cache_type),
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
  return run(tokens, {}, all_logits, false);
}

std::span<const float> Session::decode_embeddings(std::span<const float> embd) {
  const size_t width = size_t(model_.hp.n_embd);
  if (embd.empty() || embd.size() % width != 0)
    throw Error(std::to_string(embd.size()) + " floats are not whole embeddings of the model's width " +
                std::to_string(width));
  if (tentative_) throw Error("speculative decoding: embeddings cannot be tentative");
  return run({}, embd, false, false);
}

std::span<const float> Session::hidden_states(std::span<const int32_t> tokens) { return run(tokens, {}, true, true); }

const ForwardGraph& Session::step(std::span<const int32_t> tokens, std::span<const float> embd, Logits logits,
                                  bool hidden) {
  batch_.clear();
  if (embd.empty()) batch_.add(seq_, store_.layout(), tokens, logits);
  else batch_.add_embeddings(seq_, store_.layout(), embd, model_.hp.n_embd, logits);
  return executor_.forward(batch_, hidden);
}

std::span<const float> Session::run(std::span<const int32_t> tokens, std::span<const float> embd, bool all_logits,
                                    bool hidden) {
  const size_t width = size_t(model_.hp.n_embd);
  const int n = embd.empty() ? int(tokens.size()) : int(embd.size() / width);
  if (n == 0) throw Error("decode called with no tokens");
  if (seq_.n + n > n_ctx_)
    throw Error("context is full: " + std::to_string(seq_.n) + " + " + std::to_string(n) +
                " tokens exceed the context size " + std::to_string(n_ctx_) + " (raise it with --ctx-size)");
  if (tentative_ && int(tentative_tokens_.size()) + n > n_batch_)
    throw Error("speculative decoding: more than " + std::to_string(n_batch_) + " tentative tokens (the batch size)");
  for (int32_t t : tokens)
    if (t < 0 || t >= model_.hp.n_vocab) throw Error("token id " + std::to_string(t) + " is outside the vocabulary");

  logits_.clear();
  std::span<const float> out;
  for (int done = 0; done < n;) {
    const int chunk = std::min(n_batch_, n - done);
    const bool last = done + chunk == n;
    if (!store_.reserve(seq_, chunk)) throw Error("the session's state store is full (a bug: it is sized for n_ctx)");
    const Logits rows = all_logits ? Logits::ALL : last ? Logits::LAST : Logits::NONE;
    const ForwardGraph& fg = embd.empty() ? step(tokens.subspan(size_t(done), size_t(chunk)), {}, rows, hidden)
                                          : step({}, embd.subspan(size_t(done) * width, size_t(chunk) * width), rows, hidden);
    // Tentative positions keep their window slots: keep() may go back to any of them.
    store_.commit(seq_, chunk, /*slide_window=*/!tentative_);
    if (key_rope_.empty()) key_rope_ = key_ropes(fg);
    if (fg.logits) {
      out = {static_cast<const float*>(fg.logits->data), size_t(fg.logits->nelements())};
      if (all_logits && !(done == 0 && last)) logits_.insert(logits_.end(), out.begin(), out.end());
    }
    done += chunk;
  }
  if (tentative_) tentative_tokens_.insert(tentative_tokens_.end(), tokens.begin(), tokens.end());
  if (!logits_.empty()) out = logits_;
  return out;
}

void Session::begin_tentative() {
  if (tentative_) throw Error("speculative decoding: begin_tentative() before keep()");
  // The tentative steps write a cell other than the one holding the state now.
  if (!store_.keep_state_before_step(seq_))
    throw Error("speculative decoding: the session keeps no second state cell (SessionParams::speculative)");
  tentative_ = true;
  checkpoint_n_ = seq_.n;
  checkpoint_cell_ = seq_.cell_src;
  tentative_tokens_.clear();
}

void Session::keep(int n) {
  if (!tentative_) throw Error("speculative decoding: keep() without begin_tentative()");
  if (n < 0 || n > int(tentative_tokens_.size()))
    throw Error("speculative decoding: keep(" + std::to_string(n) + ") of " + std::to_string(tentative_tokens_.size()) +
                " tentative tokens");
  tentative_ = false;
  if (n < int(tentative_tokens_.size())) {
    seq_.n = checkpoint_n_;
    if (store_.layout().has_recurrent()) {
      seq_.cell_src = checkpoint_cell_;  // not written since: the tentative steps wrote seq_.cell
      if (n > 0) {
        const std::span<const int32_t> kept = std::span<const int32_t>(tentative_tokens_).first(size_t(n));
        if (!store_.reserve(seq_, n)) throw Error("speculative decoding: the kept positions lost their slots (a bug)");
        step(kept, {}, Logits::NONE, false);
      }
    }
    if (n > 0) store_.commit(seq_, n, false);  // (with none kept, the state stays the checkpoint's)
    store_.drop_uncommitted(seq_);
  }
  store_.slide_window(seq_);
  tentative_tokens_.clear();
}

void Session::shift(int keep, int n_discard) {
  if (tentative_) throw Error("context shift: not during a speculative step (keep() first)");
  check_repeatable(key_rope_);
  if (!store_.shift(seq_, keep, n_discard, moved_))
    throw Error("context shift: cannot forget " + std::to_string(n_discard) + " positions after the first " +
                std::to_string(keep) + " of " + std::to_string(seq_.n));
  KeyShiftGraph g;
  if (build_key_shift(g, store_, key_rope_, moved_, -n_discard)) executor_.compute(g.graph);
  for (auto& m : moved_) m.clear();
}

int Session::truncate(int n) {
  if (tentative_) keep(int(tentative_tokens_.size()));
  n = std::clamp(n, 0, seq_.n);
  if (store_.truncate(seq_, n)) return n;
  store_.truncate(seq_, 0);
  return 0;
}

}  // namespace hart
