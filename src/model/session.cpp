#include "model/session.h"

#include <algorithm>
#include <functional>
#include <string>

#include "common/error.h"
#include "model/forward.h"

namespace hart {
namespace {

kv::Capacity session_capacity(const HParams& hp, int n_ctx, int n_batch, int n_seq, bool speculative) {
  // Each sequence may grow to n_ctx; a window layer holds what a sequence's next position
  // attends plus one step's tokens. Speculative decoding (of sequence 0) keeps a second cell.
  const int64_t seqs = n_seq;
  return {seqs * n_ctx, seqs * std::min(n_ctx, hp.sliding_window - 1 + n_batch), seqs + (speculative ? 1 : 0)};
}

int checked_n_seq(int n_seq) {
  if (n_seq < 1) throw Error("a session needs at least one sequence, not " + std::to_string(n_seq));
  return n_seq;
}

}  // namespace

int default_n_ctx(const HParams& hp) { return std::min(hp.n_ctx_train, 4096); }

Session::Session(const Model& model, const SessionParams& params, BackendSet backends)
    : model_(model),
      n_ctx_(params.n_ctx > 0 ? params.n_ctx : default_n_ctx(model.hp)),
      n_batch_(std::max(1, params.n_batch)),
      store_(state_layout(model.hp),
             session_capacity(model.hp, n_ctx_, n_batch_, checked_n_seq(params.n_seq), params.speculative),
             params.cache_type),
      seqs_(size_t(params.n_seq)),
      executor_(model, store_, n_ctx_, std::move(backends)),
      state_on_host_(executor_.scheduler().backends().size() == 1) {
  if (params.keep_hidden) hidden_.emplace(model.hp.n_embd);
  executor_.set_keep_hidden(params.keep_hidden);
  // The sequences' slot lists, and the batch's lists of what its tokens attend, at their
  // longest, taken once: a decode step allocates nothing.
  const kv::Capacity cap = store_.capacity();
  for (kv::SeqState& s : seqs_) {
    s.full.reserve(size_t(cap.full / params.n_seq));
    s.window.reserve(size_t(cap.window / params.n_seq));
  }
  batch_.attn[int(kv::Pool::FULL)].lists.reserve(size_t(cap.full));
  batch_.attn[int(kv::Pool::WINDOW)].lists.reserve(size_t(cap.window));
  set_lora(params.lora);
}

void Session::set_lora(std::vector<float> scales) {
  if (!scales.empty() && scales.size() != model_.loras.size())
    throw Error(std::to_string(scales.size()) + " LoRA scales for a model with " + std::to_string(model_.loras.size()) +
                " adapters");
  lora_ = std::move(scales);
}

Session::~Session() = default;

std::span<const float> Session::decode(std::span<const int32_t> tokens, bool all_logits) {
  const SeqTokens in{0, tokens, all_logits ? Logits::ALL : Logits::LAST};
  run({&in, 1}, false);
  return rows_[0];
}

std::span<const float> Session::hidden_states(std::span<const int32_t> tokens) {
  const SeqTokens in{0, tokens, Logits::ALL};
  run({&in, 1}, true);
  return rows_[0];
}

void Session::decode_seqs(std::span<const SeqTokens> inputs) { run(inputs, false); }

const ForwardGraph& Session::step(std::span<const int32_t> tokens, Logits logits, bool hidden) {
  batch_.clear();
  batch_.add(seqs_[0], store_.layout(), tokens, logits, lora_);
  const ForwardGraph& fg = executor_.forward(batch_, hidden);
  store_hidden(fg, 0, seqs_[0].n, int(tokens.size()));
  return fg;
}

void Session::store_hidden(const ForwardGraph& fg, size_t row, int pos, int n) {
  if (hidden_ && fg.hidden_all)
    hidden_->store(static_cast<const float*>(fg.hidden_all->data) + row * size_t(model_.hp.n_embd), pos, n);
}

void Session::trim_hidden() {
  if (hidden_) hidden_->trim(seqs_[0].n);
}

std::span<const float> Session::decode_paired(std::span<const int32_t> tokens, std::span<const float> rows,
                                              Logits logits) {
  const size_t width = size_t(model_.hp.n_embd);
  if (rows.size() != tokens.size() * width)
    throw Error(std::to_string(rows.size()) + " floats are not one row of " + std::to_string(width) + " for each of " +
                std::to_string(tokens.size()) + " tokens");
  if (logits == Logits::ALL) throw Error("decode_paired gives the last token's logits or none");
  const SeqTokens in{0, tokens, logits};
  check_inputs({&in, 1});
  if (tentative_) throw Error("speculative decoding: paired inputs cannot be tentative");
  return in_steps(int(tokens.size()), logits, [&](kv::SeqState& s, int first, int n, Logits kind) {
    batch_.add(s, store_.layout(), tokens.subspan(size_t(first), size_t(n)), kind, lora_);
    const std::span<const float> part = rows.subspan(size_t(first) * width, size_t(n) * width);
    batch_.embd.assign(part.begin(), part.end());
  });
}

std::span<const float> Session::in_steps(int n, Logits logits,
                                         const std::function<void(kv::SeqState&, int, int, Logits)>& add) {
  kv::SeqState& s = seqs_[0];
  rows_.assign(1, {});
  for (int done = 0; done < n;) {
    const int chunk = std::min(n_batch_, n - done);
    const bool last = done + chunk == n;
    if (!store_.reserve(s, chunk)) throw Error("the session's state store is full (a bug: it is sized for n_ctx)");
    batch_.clear();
    add(s, done, chunk, last ? logits : Logits::NONE);
    const ForwardGraph& fg = executor_.forward(batch_, false);
    if (key_rope_.empty()) key_rope_ = key_ropes(fg);
    store_hidden(fg, 0, s.n, chunk);
    store_.commit(s, chunk, /*slide_window=*/true);
    if (last && fg.logits) rows_[0] = {static_cast<const float*>(fg.logits->data), size_t(fg.logits->nelements())};
    done += chunk;
  }
  return rows_[0];
}

void Session::check_inputs(std::span<const SeqTokens> inputs) const {
  if (inputs.empty()) throw Error("decode called with no sequences");
  for (size_t i = 0; i < inputs.size(); i++) {
    const SeqTokens& in = inputs[i];
    if (in.seq < 0 || in.seq >= n_seq())
      throw Error("sequence " + std::to_string(in.seq) + " is outside the session's " + std::to_string(n_seq()));
    if (tentative_ && in.seq != 0)
      throw Error("speculative decoding: sequence " + std::to_string(in.seq) + " decodes while sequence 0's tokens are tentative");
    if (tentative_ && int(tentative_tokens_.size() + in.tokens.size()) > n_batch_)
      throw Error("speculative decoding: more than " + std::to_string(n_batch_) + " tentative tokens (the batch size)");
    for (size_t j = 0; j < i; j++)
      if (inputs[j].seq == in.seq) throw Error("sequence " + std::to_string(in.seq) + " is given twice in one batch");
    const int n = int(in.tokens.size());
    if (n == 0) throw Error("decode called with no tokens");
    check_fits(in.seq, n);
    for (int32_t t : in.tokens)
      if (t < 0 || t >= model_.hp.n_vocab) throw Error("token id " + std::to_string(t) + " is outside the vocabulary");
  }
}

void Session::check_fits(int seq, int n) const {
  const int past = seqs_[size_t(seq)].n;
  if (past + n > n_ctx_)
    throw Error("context is full: " + std::to_string(past) + " + " + std::to_string(n) +
                " tokens exceed the context size " + std::to_string(n_ctx_) + " (raise it with --ctx-size)");
}

std::span<const float> Session::decode_embeddings(std::span<const float> embd) {
  const size_t width = size_t(model_.hp.n_embd);
  if (embd.empty() || embd.size() % width != 0)
    throw Error(std::to_string(embd.size()) + " floats are not whole embeddings of the model's width " +
                std::to_string(width));
  if (tentative_) throw Error("speculative decoding: embeddings cannot be tentative");
  const int n = int(embd.size() / width);
  check_fits(0, n);
  return in_steps(n, Logits::LAST, [&](kv::SeqState& s, int first, int chunk, Logits kind) {
    batch_.add_embeddings(s, store_.layout(), embd.subspan(size_t(first) * width, size_t(chunk) * width), int(width),
                          kind, lora_);
  });
}

void Session::run(std::span<const SeqTokens> inputs, bool hidden) {
  check_inputs(inputs);
  compute(inputs, hidden);
  if (tentative_) tentative_tokens_.insert(tentative_tokens_.end(), inputs[0].tokens.begin(), inputs[0].tokens.end());
}

void Session::compute(std::span<const SeqTokens> inputs, bool hidden) {
  // Where each input's rows go when they take several steps: its place in logits_.
  offset_.assign(inputs.size() + 1, 0);
  for (size_t i = 0; i < inputs.size(); i++) {
    const int64_t rows = inputs[i].logits == Logits::ALL ? int64_t(inputs[i].tokens.size())
                         : inputs[i].logits == Logits::LAST ? 1 : 0;
    offset_[i + 1] = offset_[i] + size_t(rows);
  }
  rows_.assign(inputs.size(), {});
  bool no_rows_yet = true;
  size_t width = 0;  // floats a row
  std::vector<int>& next = next_;  // per input: its first token not computed yet
  next.assign(inputs.size(), 0);
  for (size_t remaining = inputs.size(); remaining > 0;) {
    batch_.clear();
    step_.clear();
    int room = n_batch_;
    for (size_t i = 0; i < inputs.size() && room > 0; i++) {
      const SeqTokens& in = inputs[i];
      const int n = int(in.tokens.size()), chunk = std::min(n - next[i], room);
      if (chunk == 0) continue;
      const bool last = next[i] + chunk == n;
      const Logits kind = in.logits == Logits::ALL ? Logits::ALL : in.logits == Logits::LAST && last ? Logits::LAST : Logits::NONE;
      kv::SeqState& s = seqs_[size_t(in.seq)];
      if (!store_.reserve(s, chunk)) throw Error("the session's state store is full (a bug: it is sized for n_ctx)");
      const size_t tok_row = batch_.size();
      const size_t row = batch_.add(s, store_.layout(), in.tokens.subspan(size_t(next[i]), size_t(chunk)), kind, lora_);
      step_.push_back({i, next[i], chunk, kind, row, tok_row, s.n});
      next[i] += chunk;
      room -= chunk;
      if (last) remaining--;
    }
    const ForwardGraph& fg = executor_.forward(batch_, hidden);
    if (key_rope_.empty()) key_rope_ = key_ropes(fg);
    for (const StepEntry& e : step_)
      if (inputs[e.input].seq == 0) store_hidden(fg, e.tok_row, e.pos, e.n);
    // Tentative positions keep their window slots: keep() may go back to any of them.
    for (const StepEntry& e : step_) store_.commit(seqs_[size_t(inputs[e.input].seq)], e.n, /*slide_window=*/!tentative_);
    if (!fg.logits) continue;
    width = size_t(fg.logits->ne[0]);
    const auto* all = static_cast<const float*>(fg.logits->data);
    if (remaining == 0 && no_rows_yet) {  // one step computed every row: they stay in its graph
      for (const StepEntry& e : step_)
        if (e.logits != Logits::NONE)
          rows_[e.input] = {all + e.row * width, size_t(e.logits == Logits::ALL ? e.n : 1) * width};
      return;
    }
    no_rows_yet = false;
    logits_.resize(offset_.back() * width);
    for (const StepEntry& e : step_) {
      if (e.logits == Logits::NONE) continue;
      const size_t n_rows = e.logits == Logits::ALL ? size_t(e.n) : 1;
      const size_t to = offset_[e.input] + (e.logits == Logits::ALL ? size_t(e.first) : 0);
      std::copy(all + e.row * width, all + (e.row + n_rows) * width, logits_.begin() + ptrdiff_t(to * width));
    }
  }
  for (size_t i = 0; i < inputs.size(); i++)
    rows_[i] = std::span<const float>(logits_).subspan(offset_[i] * width, (offset_[i + 1] - offset_[i]) * width);
}

void Session::begin_tentative() {
  if (tentative_) throw Error("speculative decoding: begin_tentative() before keep()");
  kv::SeqState& seq = seqs_[0];
  // The tentative steps write a cell other than the one holding the state now.
  if (!store_.keep_state_before_step(seq))
    throw Error("speculative decoding: the session keeps no second state cell (SessionParams::speculative)");
  tentative_ = true;
  checkpoint_n_ = seq.n;
  checkpoint_cell_ = seq.cell_src;
  tentative_tokens_.clear();
}

void Session::keep(int n) {
  if (!tentative_) throw Error("speculative decoding: keep() without begin_tentative()");
  if (n < 0 || n > int(tentative_tokens_.size()))
    throw Error("speculative decoding: keep(" + std::to_string(n) + ") of " + std::to_string(tentative_tokens_.size()) +
                " tentative tokens");
  tentative_ = false;
  kv::SeqState& seq = seqs_[0];
  if (n < int(tentative_tokens_.size())) {
    seq.n = checkpoint_n_;
    if (store_.layout().has_recurrent()) {
      seq.cell_src = checkpoint_cell_;  // not written since: the tentative steps wrote seq.cell
      if (n > 0) {
        const std::span<const int32_t> kept = std::span<const int32_t>(tentative_tokens_).first(size_t(n));
        if (!store_.reserve(seq, n)) throw Error("speculative decoding: the kept positions lost their slots (a bug)");
        step(kept, Logits::NONE, false);
      }
    }
    if (n > 0) store_.commit(seq, n, false);  // (with none kept, the state stays the checkpoint's)
    store_.drop_uncommitted(seq);
  }
  store_.slide_window(seq);
  tentative_tokens_.clear();
  trim_hidden();
}

void Session::shift(int keep, int n_discard) {
  if (tentative_) throw Error("context shift: not during a speculative step (keep() first)");
  check_repeatable(key_rope_);
  kv::SeqState& seq = seqs_[0];
  if (!store_.shift(seq, keep, n_discard, moved_))
    throw Error("context shift: cannot forget " + std::to_string(n_discard) + " positions after the first " +
                std::to_string(keep) + " of " + std::to_string(seq.n));
  KeyShiftGraph g;
  if (build_key_shift(g, store_, key_rope_, moved_, -n_discard)) executor_.compute(g.graph);
  for (auto& m : moved_) m.clear();
  if (hidden_) hidden_->restart(seq.n);  // their positions moved
}

int Session::truncate(int seq, int n) {
  if (tentative_ && seq == 0) keep(int(tentative_tokens_.size()));
  kv::SeqState& s = seqs_.at(size_t(seq));
  n = std::clamp(n, 0, s.n);
  const int kept = store_.truncate(s, n) ? n : (store_.truncate(s, 0), 0);
  if (seq == 0) trim_hidden();
  return kept;
}

void Session::check_state_access(int seq) const {
  if (!state_on_host_)
    throw Error("a sequence's state can be saved, loaded or copied only in a session on the CPU alone "
                "(a device keeps the state in its own memory)");
  if (tentative_ && seq == 0) throw Error("speculative decoding: sequence 0's state is tentative (keep() first)");
}

void Session::save(int seq, std::vector<uint8_t>& out) const {
  check_state_access(seq);
  store_.save(seqs_.at(size_t(seq)), out);
}

void Session::load(int seq, std::span<const uint8_t> bytes) {
  check_state_access(seq);
  store_.load(seqs_.at(size_t(seq)), bytes);
}

void Session::copy(int src, int dst) {
  if (src == dst) return;
  std::vector<uint8_t> bytes;
  save(src, bytes);
  load(dst, bytes);
}

}  // namespace hart
