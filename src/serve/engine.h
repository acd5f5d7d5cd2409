// The continuous-batching scheduler: one loop thread owns the KV pool and runs one forward pass
// per step over every running sequence. Between steps, queued requests are admitted when the
// pool can hold them (prompt + max_tokens, minus what the prefix cache already holds); each step
// gives every decoding sequence one token and fills the rest of --chunk-size with prompt chunks.
// A sequence's state (kv::SequenceStore): FULL slots, one per position; sliding-window slots
// (bounded: what the window and one chunk need); a recurrent state cell. The prefix cache shares
// FULL slots, the window slots sequences still held when they handed over their tokens (at a
// prompt's end and at a request's end), and recurrent state cells as snapshots (handed over at
// the end of each prompt chunk, of the prompt and of the request; docs/DESIGN.md). The pools:
// --kv-size FULL slots; room for kv_size / chunk_size sequences in the window pool, and twice as
// many state cells (the second half for snapshots).
// A request for n choices queues n sequences; choice i samples with seed + i. Choices 1..n-1
// wait at the head of the queue until choice 0's prompt is in the prefix cache and then start
// from it, so the prompt is computed once (without a prefix cache, each choice computes it).
// A prompt with images (GenParams::images) has their embeddings at the images' positions: its
// chunks stop at each boundary between text and an image, and the images' chunks go through a
// second forward pass in the step (a batch holds tokens or embeddings). The positions' ids are
// the images' content keys, so the prefix cache reuses an image only for the same pixels.
// Speculative decoding, per sequence (GenParams::spec): a decoding sequence puts its last token
// and a draft into the step's batch, beside the other sequences' tokens, and keeps what the
// verification accepts (the rest of its slots go back to its reservation). A recurrent state is
// written to the sequence's second cell in such a step, so the cell it read still holds the state
// before it; when part of the draft is refused, the sequence goes back to that state and its
// kept tokens are computed again in its next step, with the next draft.
// llama-server's slots (--parallel) are records here, not sequences: a slot holds the tokens of
// the last request that ran in it (id_slot, or the one pick_slot chose), which the prefix cache
// holds after it; any number of requests run at once whatever their slots. Saving a slot writes
// those tokens and their state from the prefix cache; restoring one puts them back into it (the
// next request that starts with them computes only what follows); erasing one forgets them and
// frees what only they held. These run on the loop thread, between steps.
// LoRA adapters (GenParams::lora): each token of a step's batch carries its sequence's scales,
// so requests under different adapters share one forward pass. K/V computed under other scales
// are other K/V: the prefix cache keeps one namespace per set of scales (the base weights' is
// namespace 0), and a slot remembers the scales its tokens were computed with.
#pragma once

#include <atomic>
#include <functional>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <thread>

#include "grammar/vocab_trie.h"
#include "kv/radix_cache.h"
#include "kv/sequence_state.h"
#include "model/executor.h"
#include "model/forward.h"
#include "serve/metrics.h"
#include "serve/request.h"
#include "serve/slot_file.h"
#include "spec/spec_factory.h"
#include "tokenizer/text_output.h"
#include "tokenizer/tokenizer.h"

namespace hart::serve {

struct EngineOptions {
  int kv_size = 0;      // token slots in the pool; 0: 2 x n_ctx
  int n_ctx = 0;        // longest sequence; 0: the model's training context, at most 4096
  int chunk_size = 256; // tokens per step
  int max_queue = 64;   // waiting requests before new ones are refused
  bool prefix_cache = true;
  int n_slots = 1;      // llama-server's slots (--parallel)
  Type cache_type = Type::F16;
  // What requests with speculative types draft with (outlives the engine); nullptr: none may.
  const spec::SpecFactory* speculation = nullptr;
};

class QueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Engine {
 public:
  // Runs on `backends` (backend/backend_set.h), from its own loop thread.
  Engine(const Model& model, const Tokenizer& tok, const EngineOptions& opt, BackendSet backends, Metrics& metrics);
  ~Engine();

  // Queues a request (validated by the caller against n_ctx()); throws QueueFull. Its p.n
  // choices all report to the one stream (Event::index).
  std::shared_ptr<Stream> submit(GenParams p);
  int n_ctx() const { return n_ctx_; }
  int kv_size() const { return int(store_.capacity().full); }
  int chunk_size() const { return chunk_size_; }
  int max_queue() const { return max_queue_; }
  // submit() would queue a request now (fewer than --max-queue are waiting).
  bool accepting() const { return n_waiting_ < max_queue_; }
  const Model& model() const { return model_; }
  const spec::SpecFactory* speculation() const { return speculation_; }

  int n_slots() const { return int(slots_.size()); }
  // The slot a request with this prompt runs in: `want` when it is one (>= 0), else the idle slot
  // whose tokens share the longest prefix with the prompt (more than a tenth of it), else the idle
  // one used longest ago (all busy: the one used longest ago).
  int pick_slot(std::span<const int32_t> prompt, int want);
  struct SlotView {
    int id;
    bool processing;  // a request in it is queued or running
    int n_tokens;     // what it holds
  };
  std::vector<SlotView> slots() const;
  // Throws hart::Error when slots cannot be saved or restored on this engine (no prefix cache,
  // or the state is on a device rather than in host memory).
  void check_slot_persistence() const;
  // Slot id's tokens, as far as the prefix cache still holds them, and their state's bytes.
  SlotContents save_slot(int id);
  // Puts saved tokens and their state into the prefix cache as slot id's; returns how many.
  // Throws hart::Error for a state of another layout or when the pool has no room for it.
  int restore_slot(int id, const SlotContents& c);
  // Forgets slot id's tokens and frees what the prefix cache holds for them alone; returns how many.
  int erase_slot(int id);
  size_t state_bytes() const { return store_.bytes(); }

 private:
  struct Seq;
  using Clock = std::chrono::steady_clock;

  void loop();
  void admit();
  void step();
  void reserve(Seq& s, int n);
  void commit(Seq& s, int n, bool drop_rest = false);
  int draft(Seq& s, int budget);
  void verify(Seq& s, int n, int k, std::span<const float> rows);
  kv::RadixCache::Node* share(Seq& s, int n, bool continuing);
  void emit(Seq& s, std::span<const float> logits);
  std::string produce(Seq& s, int32_t tok);
  void finish(Seq& s, const std::string& reason, const std::string& error = {});
  void cancel_waiting(Seq& s);
  void publish_usage();
  // Runs f on the loop thread, between steps, and waits for it (its exception rethrown here).
  void on_loop(const std::function<void()>& f);
  void slot_done(const Seq& s, bool ran);
  const grammar::VocabTrie& vocab_trie(std::vector<int32_t> shown);
  // The prefix cache's namespace of these adapter scales (loop thread only): 0 for none or all 0.
  kv::RadixCache::Namespace lora_namespace(const std::vector<float>& scales);

  const Model& model_;
  const Tokenizer& tok_;
  Metrics& metrics_;
  int n_ctx_, chunk_size_, max_queue_;
  kv::SequenceStore store_;
  std::optional<kv::RadixCache> radix_;  // over the FULL pool, for models whose state is all K/V
  Executor executor_;
  const spec::SpecFactory* speculation_;
  bool keep_hidden_ = false;  // draft-mtp: the steps give every token's hidden state (Seq::hidden)
  std::map<std::vector<float>, kv::RadixCache::Namespace> lora_namespaces_;  // loop thread only
  kv::Capacity reserved_;  // state promised to running sequences and not yet taken
  // A step's batch and what each running sequence puts in it, kept from step to step (cleared,
  // their memory reused).
  struct StepEntry {
    Seq* seq;
    int n;        // tokens of the sequence's own
    int k;        // draft tokens after them (a verification step)
    bool logits;
    size_t row;   // its first logits row
    size_t tok_row = 0;  // its first token in the batch
    int pos = 0;         // that token's position
  };
  void run(const Batch& batch, std::vector<StepEntry>& entries);
  Batch batch_;
  std::vector<StepEntry> entries_;
  Batch embd_batch_;  // the prompt chunks of images: their embeddings (a batch holds one kind)
  std::vector<StepEntry> embd_entries_;

  std::mutex mutex_;  // guards incoming_ and stop_
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Seq>> incoming_;
  std::deque<std::function<void()>> tasks_;  // on_loop's
  bool stop_ = false;
  std::atomic<int> n_waiting_{0};  // incoming_ + waiting_, for --max-queue

  std::deque<std::unique_ptr<Seq>> waiting_;  // loop thread only, from here on
  std::list<std::unique_ptr<Seq>> running_;
  std::thread thread_;

  struct Slot {
    std::vector<int32_t> tokens;  // the last request's prompt and the generated tokens computed
    std::vector<float> lora;      // the adapter scales they were computed with
    int n_active = 0;             // its requests queued or running
    uint64_t last_use = 0;
  };
  mutable std::mutex slots_mutex_;  // guards slots_ and slot_clock_
  std::vector<Slot> slots_;
  uint64_t slot_clock_ = 0;

  // The vocabulary tries of constrained sampling, built on first use, one per set of control
  // tokens a reply shows as text (a syntax's markers: few sets per server).
  std::mutex trie_mutex_;
  std::map<std::vector<int32_t>, std::unique_ptr<grammar::VocabTrie>> tries_;
};

}  // namespace hart::serve
