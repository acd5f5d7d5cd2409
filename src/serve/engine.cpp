#include "serve/engine.h"

#include <algorithm>
#include <climits>
#include <future>
#include <optional>
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
          (s.cell > 0 ? 1 : 0) + (s.cell_spare > 0 ? 1 : 0)};
}

// The longest a sequence may grow: n_ctx, and never past the FULL pool.
int sequence_limit(int n_ctx, const kv::SequenceStore& store) {
  return store.layout().uses(kv::Pool::FULL) ? int(std::min<int64_t>(n_ctx, store.capacity().full)) : n_ctx;
}

// Where prompt position `pos` is: in an image run (`image`, with n of its positions from there
// on), or in text (image nullptr, n positions of text before the next run; INT_MAX after the last).
struct PromptRun {
  const PromptEmbeddings* image;
  int n;
};
PromptRun run_at(const GenParams& p, int pos, size_t n_embd) {
  if (p.images)
    for (const PromptEmbeddings& e : *p.images) {
      const int end = e.begin + int(e.embd.size() / n_embd);
      if (pos < e.begin) return {nullptr, e.begin - pos};
      if (pos < end) return {&e, end - pos};
    }
  return {nullptr, INT_MAX};
}

// The request's image runs lie in its prompt, in order, before its last token, each whole rows
// of the model's width at positions whose ids are content keys (negative: never a token).
void check_images(const GenParams& p, size_t n_embd) {
  if (!p.images) return;
  int32_t next = 0;
  for (const PromptEmbeddings& e : *p.images) {
    const size_t n = e.embd.size() / n_embd;
    if (e.embd.empty() || e.embd.size() % n_embd != 0 || e.begin < next ||
        int64_t(e.begin) + int64_t(n) >= int64_t(p.prompt.size()))
      throw Error("engine: an image's embeddings do not fit the prompt");
    for (size_t i = 0; i < n; i++)
      if (p.prompt[size_t(e.begin) + i] >= 0) throw Error("engine: an image's positions hold tokens, not content keys");
    next = e.begin + int32_t(n);
  }
  if (!p.spec.types.empty()) throw Error("engine: speculative decoding does not take images");
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
  kv::RadixCache::Namespace ns = 0;      // the prefix cache's namespace of its adapter scales
  Clock::time_point t_submit, t_last, t_admit, t_first;
  std::unique_ptr<spec::Speculator> spec;  // speculative decoding, when the request asks for it
  spec::SpecStats spec_stats;
  spec::Draft draft;                   // this step's
  std::vector<int32_t> verify_tokens;  // this step's tokens of a verification: its own, then the draft
  std::optional<HiddenRows> hidden;    // draft-mtp: the target's hidden states its drafter reads
  int index = 0;  // the choice, of GenParams::n
  // Shared by the choices of one request: set once choice 0's prompt is in the prefix cache (or
  // choice 0 is gone), when the other choices may start from it.
  std::shared_ptr<bool> prompt_shared;

  Seq(std::shared_ptr<Stream> st, GenParams gp, int n_vocab, const Tokenizer& tok)
      : stream(std::move(st)),
        p(std::move(gp)),
        sampler(p.sampling, n_vocab),
        text(tok, p.stops, p.shown_tokens, p.prompt.size() == 1 && p.prompt[0] == tok.bos()),
        tokens(p.prompt) {}
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
      executor_(model_, store_, sequence_limit(n_ctx_, store_), std::move(backends)),
      speculation_(opt.speculation),
      slots_(size_t(std::max(1, opt.n_slots))) {
  keep_hidden_ = speculation_ && speculation_->can(spec::SpecType::DRAFT_MTP);
  executor_.set_keep_hidden(keep_hidden_);
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
  for (spec::SpecType t : p.spec.types)
    if (!speculation_ || !speculation_->can(t))
      throw Error(std::string("engine: the server cannot draft with ") + spec::type_name(t));  // checked there too
  check_images(p, size_t(model_.hp.n_embd));
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
    if (i > 0) seqs.back()->p.slot = -1;  // choice 0's tokens are the slot's
    seqs.back()->prompt_shared = shared;
    seqs.back()->t_submit = Clock::now();
  }
  if (p.slot >= n_slots()) throw Error("engine: no slot " + std::to_string(p.slot));  // the HTTP layer checks first
  if (!p.lora.empty() && p.lora.size() != model_.loras.size())
    throw Error("engine: " + std::to_string(p.lora.size()) + " adapter scales for a model with " +
                std::to_string(model_.loras.size()) + " adapters");  // the HTTP layer checks first
  if (p.slot >= 0) {
    std::lock_guard lock(slots_mutex_);
    slots_[size_t(p.slot)].n_active++;
    slots_[size_t(p.slot)].last_use = ++slot_clock_;
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
  std::deque<std::function<void()>> tasks;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      // waiting_ is never stuck with nothing running: an idle pool holds any request that fits n_ctx.
      cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !running_.empty() || !waiting_.empty() || !tasks_.empty(); });
      if (stop_) break;
      for (auto& s : incoming_) waiting_.push_back(std::move(s));
      incoming_.clear();
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) t();
    tasks.clear();
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
  std::lock_guard lock(mutex_);  // on_loop takes no more now (stop_)
  for (auto& t : tasks_) t();
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
  slot_done(s, false);
}

// First come, first served: the queue's head waits until the pool can promise it every slot it
// may need, so a running sequence never finds the pool empty.
void Engine::admit() {
  while (!waiting_.empty()) {
    Seq& s = *waiting_.front();
    // The other choices of a request start from choice 0's prompt in the prefix cache: one prefill.
    if (radix_ && s.waits_for_prompt()) return;
    kv::RadixCache::Match m{nullptr, 0, {}, {}, kv::SequenceStore::kZeroCell};
    // draft-mtp reads the target's hidden state of every position: a cached prefix has none, so
    // its request computes its whole prompt (llama-server keeps its MTP context's state instead).
    const bool mtp = s.p.spec.has(spec::SpecType::DRAFT_MTP);
    if (radix_) {  // keep one prompt token to compute: its logits start the generation
      s.ns = lora_namespace(s.p.lora);
      m = radix_->match_prefix(std::span(s.p.prompt).first(mtp ? 0 : s.p.prompt.size() - 1), s.ns);
      radix_->lock(m.node);
    }
    kv::RadixCache::Node* node = m.node;
    const std::vector<int32_t>& matched = m.slots;
    const bool speculative = !s.p.spec.types.empty();
    kv::Capacity need = store_.need(int(s.p.prompt.size()) + s.p.max_tokens, chunk_size_, speculative);
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
    for (int32_t t : s.p.prompt)
      if (t >= 0) s.sampler.accept(t);  // an image's content keys are not tokens it could penalize
    metrics_.prompt(int(s.p.prompt.size()), s.n_cached);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    n_waiting_--;
    if (speculative) {
      try {  // a draft model's session is taken here, given back when the request ends
        s.spec = speculation_->make(s.p.spec, s.p.sampling);
        if (mtp) s.spec->bind(s.hidden.emplace(model_.hp.n_embd));
      } catch (const Error& e) {
        finish(s, "error", e.what());  // removed from running_ by the next step
      }
    }
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
// With drop_rest, the slots reserved past them go back too (a verification step's refused tokens).
void Engine::commit(Seq& s, int n, bool drop_rest) {
  const kv::Capacity before = held(s.state);
  if (n > 0) store_.commit(s.state, n);
  if (drop_rest) store_.drop_uncommitted(s.state);
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
  // (cell == cell_src: a sequence sent back to the state before a verification step holds that
  // state in the cell it reads; the one it writes holds nothing.)
  const bool snapshot = store_.layout().has_recurrent() && n == st.n && cell > 0 && cell == st.cell_src &&
                        (!continuing || store_.n_free_cells() + radix_->evictable_cells() - reserved_.cells >= 1);
  kv::RadixCache::Node* node = radix_->insert(std::span(s.tokens).first(size_t(n)), slots,
                                              window.empty() ? nullptr : &window, snapshot ? &cell : nullptr, s.ns);
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

// The sequence's draft for this step, of at most `budget` tokens, in s.draft; returns its length.
// It fits the context and the tokens the request may still generate, and a recurrent state gets
// the sequence's second cell to write, so the state the step reads survives it.
int Engine::draft(Seq& s, int budget) {
  const int room = std::min({budget, n_ctx_ - int(s.tokens.size()), s.p.max_tokens - s.n_generated, s.spec->max_draft()});
  s.draft.clear();
  if (room <= 0) return 0;
  s.spec->draft(s.tokens, room, s.draft);
  const int k = int(s.draft.tokens.size());
  if (k == 0) return 0;
  kv::SeqState& st = s.state;
  const kv::Capacity before = held(st);
  if (radix_ && store_.layout().has_recurrent() && st.cell_spare < 0 && st.cell > 0 && st.cell == st.cell_src &&
      store_.n_free_cells() == 0)
    radix_->evict(0, 0, 1);
  if (!store_.keep_state_before_step(st)) throw Error("no second state cell despite the reservation (a scheduler bug)");
  const kv::Capacity taken = difference(held(st), before);
  add(s.reserved, taken, -1);
  add(reserved_, taken, -1);
  return k;
}

void Engine::step() {
  Batch& batch = batch_;
  std::vector<StepEntry>& entries = entries_;
  batch.clear();
  entries.clear();
  embd_batch_.clear();
  embd_entries_.clear();
  const size_t n_embd = size_t(model_.hp.n_embd);
  int budget = chunk_size_;
  // Decoding sequences first (their tokens, usually one, and a draft), then prompt chunks in
  // arrival order.
  for (bool prefill : {false, true})
    for (auto& sp : running_) {
      Seq& s = *sp;
      if (!s.stream || s.prefilling() != prefill) continue;
      const int pending = int(s.tokens.size()) - s.n_computed();
      // A prompt chunk stops where its text meets an image or its image meets text: a batch
      // holds tokens or embeddings, and an image's go through a batch of their own.
      const PromptRun run = prefill ? run_at(s.p, s.n_computed(), n_embd) : PromptRun{nullptr, INT_MAX};
      const int n = std::min(prefill ? std::min(pending, budget) : pending, run.n);
      if (n <= 0) continue;
      if (run.image) {
        reserve(s, n);
        const size_t first = size_t(s.n_computed() - run.image->begin) * n_embd;
        embd_batch_.add_embeddings(s.state, store_.layout(), std::span(run.image->embd).subspan(first, size_t(n) * n_embd),
                                   int(n_embd), Logits::NONE, s.p.lora);
        embd_entries_.push_back({&s, n, 0, false, 0});
        budget -= n;
        continue;
      }
      int k = 0;
      if (!prefill && s.spec) {
        try {
          k = draft(s, budget - n);
        } catch (const Error& err) {
          finish(s, "error", err.what());
          continue;
        }
      }
      reserve(s, n + k);
      std::span<const int32_t> tokens = std::span(s.tokens).subspan(size_t(s.n_computed()), size_t(n));
      if (k > 0) {
        s.verify_tokens.assign(tokens.begin(), tokens.end());
        s.verify_tokens.insert(s.verify_tokens.end(), s.draft.tokens.begin(), s.draft.tokens.end());
        tokens = s.verify_tokens;
      }
      const bool logits = s.n_computed() + n == int(s.tokens.size());
      const size_t tok_row = batch.size();
      const size_t row =
          batch.add(s.state, store_.layout(), tokens, k > 0 ? Logits::ALL : logits ? Logits::LAST : Logits::NONE, s.p.lora);
      entries.push_back({&s, n, k, logits, row, tok_row, s.n_computed()});
      budget -= n + k;
    }
  if (!embd_entries_.empty()) run(embd_batch_, embd_entries_);
  if (!entries.empty()) run(batch, entries);
  running_.remove_if([](const std::unique_ptr<Seq>& s) { return s->stream == nullptr; });
}

// One forward pass over a step's batch, and what each sequence in it does with the result.
void Engine::run(const Batch& batch, std::vector<StepEntry>& entries) {
  try {
    const ForwardGraph& fg = executor_.forward(batch);
    for (StepEntry& e : entries)
      if (e.seq->hidden && fg.hidden_all)
        e.seq->hidden->store(static_cast<const float*>(fg.hidden_all->data) + e.tok_row * size_t(model_.hp.n_embd), e.pos,
                             e.n + e.k);
    for (StepEntry& e : entries)
      if (e.k == 0) commit(*e.seq, e.n);
    const size_t n_vocab = size_t(model_.hp.n_vocab);
    const float* rows = fg.logits ? static_cast<const float*>(fg.logits->data) : nullptr;
    for (StepEntry& e : entries) {
      Seq& s = *e.seq;
      if (e.k > 0) {  // the rows of its last own token and of the draft's
        verify(s, e.n, e.k, {rows + (e.row + size_t(e.n) - 1) * n_vocab, size_t(e.k + 1) * n_vocab});
        continue;
      }
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
      if (e.logits) emit(s, {rows + e.row * n_vocab, n_vocab});
    }
  } catch (const Error& err) {
    for (StepEntry& e : entries) finish(*e.seq, "error", err.what());
  }
}

// A verification step computed the sequence's n own tokens and k drafted ones: the drafted tokens
// the target's sampling keeps are sent, and the state keeps what was computed up to the last of
// them (a recurrent one, written past them, goes back to the state before the step, and the
// kept tokens are computed again next step); then the target's own next token.
void Engine::verify(Seq& s, int n, int k, std::span<const float> rows) {
  std::string reason;
  const spec::Speculator::Verified v = s.spec->verify(
      s.draft, rows, model_.hp.n_vocab, s.sampler, [&](int32_t t) { return tok_.is_eog(t); },
      [&](int32_t x) {
        reason = produce(s, x);
        return reason.empty();
      });
  s.spec_stats.n_drafted += k;
  s.spec_stats.n_accepted += v.n_kept;
  s.spec_stats.n_verified++;
  metrics_.draft(k, v.n_kept);
  const int kept = v.n_kept - (v.next < 0 ? 1 : 0);  // a kept token that ended the request is not computed
  if (kept == k || !store_.layout().has_recurrent()) {
    commit(s, n + kept, /*drop_rest=*/true);
  } else {
    commit(s, 0, /*drop_rest=*/true);  // its cell_src was not written: the state before the step
    kv::SeqState& st = s.state;
    if (st.cell_src == st.cell_spare) std::swap(st.cell, st.cell_spare);
  }
  if (s.hidden) s.hidden->trim(s.n_computed());  // the refused tokens' states go
  if (reason.empty() && v.next >= 0) reason = produce(s, v.next);
  if (!reason.empty()) finish(s, reason);
}

// Samples the sequence's next token and sends it.
void Engine::emit(Seq& s, std::span<const float> logits) {
  const std::string reason = produce(s, s.sampler.sample(logits));
  if (!reason.empty()) finish(s, reason);
}

// The token the sequence's sampler chose: accepted, and sent with what became final. Returns the
// finish reason when the request ends with it ("" otherwise); the caller finishes it.
std::string Engine::produce(Seq& s, int32_t tok) {
  s.sampler.accept(tok);
  const Clock::time_point now = Clock::now();
  if (s.n_generated == 0) {
    metrics_.first_token(std::chrono::duration<double>(now - s.t_submit).count());
    s.t_first = now;
  } else {
    metrics_.next_token(std::chrono::duration<double>(now - s.t_last).count());
  }
  s.t_last = now;

  if (tok_.is_eog(tok)) return "stop";
  Event ev;
  ev.index = s.index;
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
  if (s.text.stopped() || (s.constraint && s.constraint->finished())) return "stop";
  if (s.n_generated >= s.p.max_tokens || int(s.tokens.size()) >= n_ctx_) return "length";
  return {};
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
  slot_done(s, true);
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
  ev.draft_n = s.spec_stats.n_drafted;
  ev.draft_n_accepted = s.spec_stats.n_accepted;
  s.spec.reset();  // a draft model's session goes back for the next request
  s.stream->push(std::move(ev));
  s.stream.reset();
  metrics_.request_finished(reason);
}

// The request is gone from its slot; one that ran leaves its computed tokens there.
void Engine::slot_done(const Seq& s, bool ran) {
  if (s.p.slot < 0) return;
  std::lock_guard lock(slots_mutex_);
  Slot& slot = slots_[size_t(s.p.slot)];
  slot.n_active--;
  if (ran) {
    slot.tokens.assign(s.tokens.begin(), s.tokens.begin() + s.n_computed());
    slot.lora = s.p.lora;
  }
}

kv::RadixCache::Namespace Engine::lora_namespace(const std::vector<float>& scales) {
  if (std::all_of(scales.begin(), scales.end(), [](float x) { return x == 0.0f; })) return 0;
  // One namespace per distinct set of scales a client asked for (a few floats each, kept for the
  // server's life: a namespace's cached tokens are evicted as any others).
  return lora_namespaces_.emplace(scales, kv::RadixCache::Namespace(lora_namespaces_.size() + 1)).first->second;
}

int Engine::pick_slot(std::span<const int32_t> prompt, int want) {
  if (want >= 0) return want;
  std::lock_guard lock(slots_mutex_);
  int best = -1;
  size_t best_common = 0;
  for (size_t i = 0; i < slots_.size(); i++) {
    const Slot& s = slots_[i];
    if (s.n_active > 0) continue;
    const size_t n = std::min(s.tokens.size(), prompt.size());
    const size_t common = size_t(std::mismatch(s.tokens.begin(), s.tokens.begin() + long(n), prompt.begin()).first - s.tokens.begin());
    // llama-server's rule (--slot-prompt-similarity 0.1): more than a tenth of the prompt in common.
    if (common > best_common && common * 10 > prompt.size()) best = int(i), best_common = common;
  }
  if (best >= 0) return best;
  // None shares a prefix: the idle one used longest ago, or (all busy) the one used longest ago.
  for (bool idle_only : {true, false})
    for (size_t i = 0; i < slots_.size(); i++)
      if ((!idle_only || slots_[i].n_active == 0) && (best < 0 || slots_[i].last_use < slots_[size_t(best)].last_use))
        best = int(i);
  return best;
}

std::vector<Engine::SlotView> Engine::slots() const {
  std::lock_guard lock(slots_mutex_);
  std::vector<SlotView> out;
  for (size_t i = 0; i < slots_.size(); i++) out.push_back({int(i), slots_[i].n_active > 0, int(slots_[i].tokens.size())});
  return out;
}

void Engine::on_loop(const std::function<void()>& f) {
  std::promise<void> done;
  std::future<void> result = done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (stop_) throw Error("the server is shutting down");
    tasks_.push_back([&] {
      try {
        f();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    });
  }
  cv_.notify_all();
  result.get();
}

void Engine::check_slot_persistence() const {
  if (!radix_) throw Error("slots are saved from and restored into the prefix cache, which this server runs without (--no-prefix-cache)");
  if (executor_.scheduler().backends().size() != 1)
    throw Error("slots can be saved and restored only by a server on the CPU alone (a device keeps the state in its own memory)");
}

SlotContents Engine::save_slot(int id) {
  check_slot_persistence();
  SlotContents c;
  on_loop([&] {
    {
      std::lock_guard lock(slots_mutex_);
      c.tokens = slots_.at(size_t(id)).tokens;
      c.lora = slots_.at(size_t(id)).lora;
    }
    // Where a request could continue from (the window and snapshot rules of match_prefix).
    const kv::RadixCache::Match m = radix_->match_prefix(c.tokens, lora_namespace(c.lora));
    c.tokens.resize(m.n);
    kv::SeqState st;
    st.n = int(m.n);
    st.full = m.slots;
    if (!m.window.empty()) {
      st.window_begin = std::max(0, st.n - store_.layout().window + 1);
      st.window.assign(m.window.begin() + st.window_begin, m.window.end());
    }
    st.cell = st.cell_src = m.cell;
    store_.save(st, c.state);
  });
  return c;
}

int Engine::restore_slot(int id, const SlotContents& c) {
  check_slot_persistence();
  for (int32_t t : c.tokens)
    if (t >= model_.hp.n_vocab) throw Error("the slot file holds token " + std::to_string(t) + ", not in this model's vocabulary");
  if (!c.lora.empty() && c.lora.size() != model_.loras.size())
    throw Error("the slot file was saved with " + std::to_string(c.lora.size()) + " LoRA adapters; this server has " +
                std::to_string(model_.loras.size()));
  if (int(c.tokens.size()) > n_ctx_)
    throw Error("the slot file holds " + std::to_string(c.tokens.size()) + " tokens; this server's context is " + std::to_string(n_ctx_));
  on_loop([&] {
    const int n = int(c.tokens.size());
    const kv::StateLayout& layout = store_.layout();
    // Room: free slots and the prefix cache's unlocked ones, less what running requests are promised.
    const kv::Capacity need{layout.uses(kv::Pool::FULL) ? n : 0,
                            layout.uses(kv::Pool::WINDOW) ? std::min(n, std::max(0, layout.window - 1)) : 0,
                            layout.has_recurrent() && n > 0 ? 1 : 0};
    const kv::Capacity available{store_.n_free(kv::Pool::FULL) + radix_->evictable() - reserved_.full,
                                 store_.n_free(kv::Pool::WINDOW) + radix_->evictable_window() - reserved_.window,
                                 store_.n_free_cells() + radix_->evictable_cells() - reserved_.cells};
    if (!fits(need, available))
      throw Error("the KV pool has no room for the slot's " + std::to_string(n) + " tokens beside the requests running now");
    radix_->evict(int32_t(std::max<int64_t>(0, need.full - store_.n_free(kv::Pool::FULL))),
                  int32_t(std::max<int64_t>(0, need.window - store_.n_free(kv::Pool::WINDOW))),
                  int32_t(std::max<int64_t>(0, need.cells - store_.n_free_cells())));
    kv::SeqState st;
    store_.load(st, c.state);
    if (st.n != n) {
      store_.release(st);
      throw Error("the slot file's state holds " + std::to_string(st.n) + " positions for its " + std::to_string(n) + " tokens");
    }
    if (n > 0) {  // the prefix cache takes it all, as from a finished request
      std::vector<int32_t> slots = st.full, window;
      if (layout.uses(kv::Pool::WINDOW)) {
        window.assign(size_t(n), -1);
        for (int p = st.window_begin; p < n; p++) window[size_t(p)] = st.window_slot(p);
      }
      int32_t cell = st.cell;
      radix_->insert(c.tokens, slots, window.empty() ? nullptr : &window, layout.has_recurrent() ? &cell : nullptr,
                     lora_namespace(c.lora));
      if (cell > 0) store_.cell_pool().free({&cell, 1});  // the cache had that snapshot already
    }
    {
      std::lock_guard lock(slots_mutex_);
      slots_.at(size_t(id)).tokens = c.tokens;
      slots_.at(size_t(id)).lora = c.lora;
    }
    publish_usage();
  });
  return int(c.tokens.size());
}

int Engine::erase_slot(int id) {
  int n = 0;
  on_loop([&] {
    std::vector<int32_t> tokens;
    std::vector<float> lora;
    {
      std::lock_guard lock(slots_mutex_);
      tokens.swap(slots_.at(size_t(id)).tokens);
      lora.swap(slots_.at(size_t(id)).lora);
    }
    n = int(tokens.size());
    if (radix_) radix_->drop(tokens, lora_namespace(lora));
    publish_usage();
  });
  return n;
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
