#include "serve/engine.h"

#include <algorithm>
#include <thread>

#include "common/error.h"
#include "grammar/grammar_constraint.h"
#include "grammar/tokenizer_vocab.h"
#include "model/session.h"

namespace hart::serve {
namespace {

// kv_size FULL slots; for window and recurrent layers, room for as many sequences as the FULL
// pool could hold at one chunk each (every running sequence holds at least that), and as many
// state cells again for the prefix cache's snapshots.
kv::Capacity capacity(const HParams& hp, const EngineOptions& opt, int n_ctx) {
  const int64_t full = opt.kv_size > 0 ? opt.kv_size : 2 * int64_t(n_ctx);
  const int64_t max_seqs = std::max<int64_t>(1, full / std::max(1, opt.chunk_size));
  return {full, max_seqs * (hp.sliding_window - 1 + std::max(1, opt.chunk_size)), 2 * max_seqs};
}

bool fits(const kv::Capacity& need, const kv::Capacity& available) {
  return need.full <= available.full && need.window <= available.window && need.cells <= available.cells;
}

void add(kv::Capacity& to, const kv::Capacity& c, int sign) {
  to.full += sign * c.full;
  to.window += sign * c.window;
  to.cells += sign * c.cells;
}

kv::Capacity difference(const kv::Capacity& a, const kv::Capacity& b) {
  return {a.full - b.full, a.window - b.window, a.cells - b.cells};
}

// What a sequence holds of each pool (window slots of shared positions belong to the prefix
// cache, not to its reservation).
kv::Capacity held(const kv::SeqState& s) {
  const int64_t window_end = s.window_begin + int64_t(s.window.size());
  return {int64_t(s.full.size()), window_end - std::max<int64_t>(s.window_begin, std::min<int64_t>(s.n_shared, window_end)),
          s.cell > 0 ? 1 : 0};
}

// The longest a sequence may grow: n_ctx, and never past the FULL pool.
int sequence_limit(int n_ctx, const kv::SequenceStore& store) {
  return store.layout().uses(kv::Pool::FULL) ? int(std::min<int64_t>(n_ctx, store.capacity().full)) : n_ctx;
}

}  // namespace

struct Engine::Seq {
  std::shared_ptr<Stream> stream;
  GenParams p;
  Sampler sampler;
  std::unique_ptr<grammar::GrammarConstraint> constraint;  // structured output, when asked for
  TextOutput text;
  std::vector<int32_t> tokens;  // prompt, then generated
  kv::SeqState state;           // positions tokens[0, state.n) are computed
  int n_cached = 0;             // prompt tokens found in the prefix cache
  int n_generated = 0;
  kv::Capacity reserved;        // state still promised to this sequence
  kv::RadixCache::Node* node = nullptr;  // the locked end of its cached path
  Clock::time_point t_submit, t_last;
  Clock::time_point t_admit, t_first;  // admitted; its first token sampled
  int index = 0;  // the choice, of GenParams::n
  // Shared by the choices of one request: set once choice 0's prompt is in the prefix cache (or
  // choice 0 is gone), when the other choices may start from it.
  std::shared_ptr<bool> prompt_shared;

  Seq(std::shared_ptr<Stream> st, GenParams gp, int n_vocab, const Tokenizer& tok)
      : stream(std::move(st)), p(std::move(gp)), sampler(p.sampling, n_vocab), text(tok, p.stops, p.shown_tokens), tokens(p.prompt) {}
  bool waits_for_prompt() const { return index > 0 && !*prompt_shared; }
  void prompt_is_shared() const {
    if (index == 0) *prompt_shared = true;
  }
  int n_computed() const { return state.n; }
  bool prefilling() const { return n_computed() < int(p.prompt.size()); }
};

Engine::Engine(const Model& model, const Tokenizer& tok, const EngineOptions& opt, BackendSet backends,
               Metrics& metrics)
    : model_(model),
      tok_(tok),
      metrics_(metrics),
      n_ctx_(opt.n_ctx > 0 ? opt.n_ctx : default_n_ctx(model.hp)),
      chunk_size_(std::max(1, opt.chunk_size)),
      max_queue_(opt.max_queue),
      store_(state_layout(model.hp), capacity(model.hp, opt, n_ctx_), opt.cache_type),
      executor_(model_, store_, sequence_limit(n_ctx_, store_), std::move(backends)) {
  const kv::StateLayout& layout = store_.layout();
  n_ctx_ = sequence_limit(n_ctx_, store_);
  if (opt.prefix_cache)
    radix_.emplace(layout.uses(kv::Pool::FULL) ? &store_.pool(kv::Pool::FULL) : nullptr,
                   layout.uses(kv::Pool::WINDOW) ? &store_.pool(kv::Pool::WINDOW) : nullptr, layout.window,
                   layout.has_recurrent() ? &store_.cell_pool() : nullptr);
  publish_usage();
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<Stream> Engine::submit(GenParams p) {
  if (p.prompt.empty() || p.max_tokens <= 0 || int(p.prompt.size()) + p.max_tokens > n_ctx_)
    throw Error("engine: request does not fit the context");  // the HTTP layer checks first
  const int n = std::max(1, p.n);
  if (n_waiting_ + n > max_queue_)
    throw QueueFull("the server is busy: " + std::to_string(max_queue_) + " requests are already waiting");
  auto stream = std::make_shared<Stream>();
  auto shared = std::make_shared<bool>(false);
  std::vector<std::unique_ptr<Seq>> seqs;
  for (int i = 0; i < n; i++) {
    GenParams gp = p;
    // Choice i samples with seed + i: a given seed reproduces every choice.
    if (p.sampling.seed != kRandomSeed) {
      gp.sampling.seed = p.sampling.seed + uint64_t(i);
      if (gp.sampling.seed == kRandomSeed) gp.sampling.seed++;
    }
    seqs.push_back(std::make_unique<Seq>(stream, std::move(gp), model_.hp.n_vocab, tok_));
    if (Seq& s = *seqs.back(); s.p.grammar) {  // each choice matches the grammar on its own
      s.constraint = std::make_unique<grammar::GrammarConstraint>(s.p.grammar, vocab_trie(s.p.shown_tokens));
      s.sampler.set_constraint(s.constraint.get());
    }
    seqs.back()->index = i;
    seqs.back()->prompt_shared = shared;
    seqs.back()->t_submit = Clock::now();
  }
  n_waiting_ += n;
  {
    std::lock_guard lock(mutex_);
    for (auto& seq : seqs) incoming_.push_back(std::move(seq));
  }
  cv_.notify_all();
  return stream;
}

const grammar::VocabTrie& Engine::vocab_trie(std::vector<int32_t> shown) {
  std::sort(shown.begin(), shown.end());
  std::lock_guard lock(trie_mutex_);
  std::unique_ptr<grammar::VocabTrie>& trie = tries_[shown];
  if (!trie) trie = grammar::vocab_trie_for(tok_, shown);
  return *trie;
}

void Engine::loop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      // waiting_ is never stuck with nothing running: an idle pool holds any request that fits n_ctx.
      cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !running_.empty() || !waiting_.empty(); });
      if (stop_) break;
      for (auto& s : incoming_) waiting_.push_back(std::move(s));
      incoming_.clear();
    }
    // A client that went away frees its slots now, queued or running.
    for (auto it = waiting_.begin(); it != waiting_.end();)
      if ((*it)->stream->cancelled()) {
        cancel_waiting(**it);
        it = waiting_.erase(it);
        n_waiting_--;
      } else {
        ++it;
      }
    for (auto it = running_.begin(); it != running_.end();)
      if ((*it)->stream->cancelled()) {
        finish(**it, "cancelled");
        it = running_.erase(it);
      } else {
        ++it;
      }
    admit();
    publish_usage();
    if (!running_.empty()) step();
  }
  // Shutting down: every waiting client gets its answer.
  for (auto& s : running_) finish(*s, "cancelled");
  for (auto* queue : {&waiting_, &incoming_})
    for (auto& s : *queue) cancel_waiting(*s);
}

// Ends a request that holds no slots yet.
void Engine::cancel_waiting(Seq& s) {
  s.prompt_is_shared();  // the other choices stop waiting (and see the cancel themselves)
  Event ev;
  ev.index = s.index;
  ev.done = true;
  ev.finish_reason = "cancelled";
  ev.prompt_tokens = int(s.p.prompt.size());
  s.stream->push(std::move(ev));
  metrics_.request_finished("cancelled");
}

// First come, first served: the queue's head waits until the pool can promise it every slot it
// may need, so a running sequence never finds the pool empty.
void Engine::admit() {
  while (!waiting_.empty()) {
    Seq& s = *waiting_.front();
    // The other choices of a request start from choice 0's prompt in the prefix cache: one prefill.
    if (radix_ && s.waits_for_prompt()) return;
    kv::RadixCache::Match m{nullptr, 0, {}, {}, kv::SequenceStore::kZeroCell};
    if (radix_) {  // keep one prompt token to compute: its logits start the generation
      m = radix_->match_prefix(std::span(s.p.prompt).first(s.p.prompt.size() - 1));
      radix_->lock(m.node);
    }
    kv::RadixCache::Node* node = m.node;
    const std::vector<int32_t>& matched = m.slots;
    kv::Capacity need = store_.need(int(s.p.prompt.size()) + s.p.max_tokens, chunk_size_);
    need.full -= int64_t(matched.size());
    const kv::Capacity available{
        store_.n_free(kv::Pool::FULL) + (radix_ ? radix_->evictable() : 0) - reserved_.full,
        store_.n_free(kv::Pool::WINDOW) + (radix_ ? radix_->evictable_window() : 0) - reserved_.window,
        store_.n_free_cells() + (radix_ ? radix_->evictable_cells() : 0) - reserved_.cells};
    if (!fits(need, available)) {
      if (radix_) radix_->unlock(node);
      return;
    }
    s.node = node;
    s.state.full = matched;
    const int n_matched = int(m.n);
    s.state.n = s.state.n_shared = s.n_cached = n_matched;
    s.state.cell_src = m.cell;  // the snapshot of the state there (tree-owned: read, never written)
    if (!m.window.empty()) {  // the window the next position attends, all of it held by the cache
      s.state.window_begin = std::max(0, n_matched - store_.layout().window + 1);
      s.state.window.assign(m.window.begin() + s.state.window_begin, m.window.end());
    }
    s.reserved = need;
    add(reserved_, need, +1);
    s.t_admit = Clock::now();
    for (int32_t t : s.p.prompt) s.sampler.accept(t);
    metrics_.prompt(int(s.p.prompt.size()), s.n_cached);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    n_waiting_--;
  }
}

// Takes state for the sequence's next n positions out of its reservation.
void Engine::reserve(Seq& s, int n) {
  const kv::Capacity before = held(s.state);
  const kv::SeqState& st = s.state;
  const int64_t want_full = st.n + n - int64_t(st.full.size());
  const int64_t want_window = st.n + n - (st.window.empty() ? st.n : st.window_begin + int64_t(st.window.size()));
  const int64_t short_full = want_full - store_.n_free(kv::Pool::FULL);
  const int64_t short_window = store_.layout().uses(kv::Pool::WINDOW) ? want_window - store_.n_free(kv::Pool::WINDOW) : 0;
  const bool short_cell = store_.layout().has_recurrent() && st.cell < 0 && store_.n_free_cells() == 0;
  if (radix_ && (short_full > 0 || short_window > 0 || short_cell))
    radix_->evict(int32_t(std::max<int64_t>(0, short_full)), int32_t(std::max<int64_t>(0, short_window)),
                  short_cell ? 1 : 0);
  if (!store_.reserve(s.state, n)) throw Error("KV pool exhausted despite the reservation (a scheduler bug)");
  const kv::Capacity taken = difference(held(s.state), before);
  add(s.reserved, taken, -1);
  add(reserved_, taken, -1);
}

// The step computed the sequence's next n positions: window slots it gave back are promised
// to it again.
void Engine::commit(Seq& s, int n) {
  const kv::Capacity before = held(s.state);
  store_.commit(s.state, n);
  const kv::Capacity freed = difference(before, held(s.state));
  add(s.reserved, freed, +1);
  add(reserved_, freed, +1);
}

// The prefix cache takes the first n positions' slots: every FULL one, and the WINDOW ones the
// sequence still holds (where the cache has the same tokens already, the sequence uses the
// cache's slots and its own go back to the pool). For recurrent layers, at n = the positions
// computed, it also takes the state cell as a snapshot; a `continuing` sequence then goes on in a
// new cell, so it hands its cell over only when another can be promised to it.
kv::RadixCache::Node* Engine::share(Seq& s, int n, bool continuing) {
  kv::SeqState& st = s.state;
  std::vector<int32_t> slots(st.full.begin(), st.full.begin() + (st.full.empty() ? 0 : n)), window;
  const int held_end = std::min(n, st.window_begin + int(st.window.size()));
  if (store_.layout().uses(kv::Pool::WINDOW)) {
    window.assign(size_t(n), -1);
    for (int p = st.window_begin; p < held_end; p++) window[size_t(p)] = st.window_slot(p);
  }
  int32_t cell = st.cell;
  const bool snapshot = store_.layout().has_recurrent() && n == st.n && cell > 0 &&
                        (!continuing || store_.n_free_cells() + radix_->evictable_cells() - reserved_.cells >= 1);
  kv::RadixCache::Node* node = radix_->insert(std::span(s.tokens).first(size_t(n)), slots,
                                              window.empty() ? nullptr : &window, snapshot ? &cell : nullptr);
  if (snapshot && cell < 0) {  // the cache took the cell (st.cell_src still reads it): write a new one
    st.cell = -1;
    if (continuing) {
      s.reserved.cells++;
      reserved_.cells++;
    }
  }
  std::copy(slots.begin(), slots.end(), st.full.begin());
  for (int p = st.window_begin; p < held_end; p++) st.window[size_t(p - st.window_begin)] = window[size_t(p)];
  st.n_shared = n;
  return node;
}

void Engine::step() {
  Batch& batch = batch_;
  std::vector<StepEntry>& entries = entries_;
  batch.clear();
  entries.clear();
  int budget = chunk_size_;
  // Decoding sequences first (one token each), then prompt chunks in arrival order.
  for (bool prefill : {false, true})
    for (auto& sp : running_) {
      Seq& s = *sp;
      if (s.prefilling() != prefill) continue;
      const int pending = int(s.tokens.size()) - s.n_computed();
      const int n = prefill ? std::min(pending, budget) : 1;
      if (n <= 0) continue;
      reserve(s, n);
      const bool logits = s.n_computed() + n == int(s.tokens.size());
      batch.add(s.state, store_.layout(), std::span(s.tokens).subspan(size_t(s.n_computed()), size_t(n)),
                logits ? Logits::LAST : Logits::NONE);
      entries.push_back({&s, n, logits});
      budget -= n;
    }
  if (entries.empty()) return;

  try {
    const ForwardGraph& fg = executor_.forward(batch);
    for (StepEntry& e : entries) commit(*e.seq, e.n);
    size_t row = 0;
    const size_t n_vocab = size_t(model_.hp.n_vocab);
    for (StepEntry& e : entries) {
      Seq& s = *e.seq;
      // The prompt is in: share it. A recurrent model also shares each prompt chunk's end, where
      // its state is a snapshot a request with the same beginning can start from.
      const bool prompt_done = !s.prefilling() && s.n_generated == 0;
      if (radix_ && (prompt_done || (s.prefilling() && store_.layout().has_recurrent()))) {
        kv::RadixCache::Node* node = share(s, s.n_computed(), true);
        radix_->lock(node);
        radix_->unlock(s.node);
        s.node = node;
        if (prompt_done) s.prompt_is_shared();
      }
      if (e.logits) emit(s, {static_cast<const float*>(fg.logits->data) + row++ * n_vocab, n_vocab});
    }
  } catch (const Error& err) {
    for (StepEntry& e : entries) finish(*e.seq, "error", err.what());
  }
  running_.remove_if([](const std::unique_ptr<Seq>& s) { return s->stream == nullptr; });
}

// Samples the sequence's next token and sends what became final.
void Engine::emit(Seq& s, std::span<const float> logits) {
  const int32_t tok = s.sampler.sample(logits);
  s.sampler.accept(tok);
  const Clock::time_point now = Clock::now();
  if (s.n_generated == 0) metrics_.first_token(std::chrono::duration<double>(now - s.t_submit).count());
  else metrics_.next_token(std::chrono::duration<double>(now - s.t_last).count());
  if (s.n_generated == 0) s.t_first = now;
  s.t_last = now;

  Event ev;
  ev.index = s.index;
  if (tok_.is_eog(tok)) {
    finish(s, "stop");
    return;
  }
  s.n_generated++;
  s.tokens.push_back(tok);
  TokenInfo info{tok, 0.0f, {}};
  if (s.p.sampling.logprobs) {
    info.logprob = s.sampler.last_logprob();
    const auto top = s.sampler.last_top_logprobs();
    info.top.assign(top.begin(), top.end());
  }
  ev.tokens.push_back(std::move(info));
  ev.text = s.text.push(tok);
  s.stream->push(std::move(ev));
  if (s.constraint) s.constraint->accept(tok);
  if (s.text.stopped() || (s.constraint && s.constraint->finished())) finish(s, "stop");
  else if (s.n_generated >= s.p.max_tokens || int(s.tokens.size()) >= n_ctx_) finish(s, "length");
}

// Sends the last event and gives the sequence's slots to the prefix cache (or back to the pool).
// The sequence is removed from running_ by the caller (its stream is reset here).
void Engine::finish(Seq& s, const std::string& reason, const std::string& error) {
  if (!s.stream) return;
  s.prompt_is_shared();
  if (radix_) {
    share(s, s.n_computed(), false);
    radix_->unlock(s.node);
  }
  store_.release(s.state);  // what is not shared; slots taken for a step that failed hold nothing
  add(reserved_, s.reserved, -1);
  Event ev;
  ev.index = s.index;
  ev.text = s.text.flush();
  ev.done = true;
  ev.finish_reason = reason;
  ev.error = error;
  ev.stop_word = s.text.stop_word();
  ev.prompt_tokens = int(s.p.prompt.size());
  ev.cached_tokens = s.n_cached;
  ev.completion_tokens = s.n_generated;
  if (s.t_first != Clock::time_point{}) {
    using Ms = std::chrono::duration<double, std::milli>;
    ev.prompt_ms = Ms(s.t_first - s.t_admit).count();
    ev.predicted_ms = Ms(Clock::now() - s.t_first).count();
  }
  s.stream->push(std::move(ev));
  s.stream.reset();
  metrics_.request_finished(reason);
}

void Engine::publish_usage() {
  KvUsage u;
  u.size = store_.capacity().full;
  u.used = store_.capacity().full - store_.n_free(kv::Pool::FULL);
  u.window_size = store_.capacity().window;
  u.window_used = store_.capacity().window - store_.n_free(kv::Pool::WINDOW);
  u.cached = radix_ ? radix_->cached() : 0;
  u.running = int64_t(running_.size());
  u.waiting = n_waiting_;
  metrics_.set_kv(u);
}

}  // namespace hart::serve
