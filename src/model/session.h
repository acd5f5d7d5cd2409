// The sequences one caller generates: their state (KV cache and any recurrent state, in a
// kv::SequenceStore of the session's own), the executor that computes their graphs, and the
// positions each has computed. The CLI uses one sequence (0); the C API (include/hart.h) as many
// as SessionParams::n_seq asks for, decoded together in one batch per step.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/sequence_state.h"
#include "model/executor.h"
#include "model/hidden_rows.h"
#include "model/key_shift.h"
#include "model/model.h"

namespace hart {

struct SessionParams {
  int n_ctx = 0;                // 0: the model's training context, capped at 4096
  int n_batch = 512;            // most tokens computed in one step (a longer prompt is split)
  Type cache_type = Type::F16;  // F16 (as llama.cpp) or F32
  // Speculative decoding (verify / accept): a recurrent state gets a second cell, so the state
  // before a verification step survives it.
  bool speculative = false;
  int n_seq = 1;  // sequences, each of up to n_ctx positions (the store holds them all)
  // The scale of each of the model's LoRA adapters (Model::loras) for every token; empty: all 0.
  std::vector<float> lora = {};
  // Keep every computed position's last hidden state after the output norm (sequence 0's), for
  // a drafter that reads them (draft-mtp: spec/mtp_drafter.h): hidden_rows().
  bool keep_hidden = false;
};

// One sequence's new tokens in a batch of several (Session::decode_seqs).
struct SeqTokens {
  int seq = 0;
  std::span<const int32_t> tokens;
  Logits logits = Logits::LAST;
};

class Session {
 public:
  // Runs on `backends` (backend/backend_set.h: e.g. BackendSet({"cpu"}, n_threads, "")).
  Session(const Model& model, const SessionParams& params, BackendSet backends);
  ~Session();

  // Appends `tokens` to sequence 0 at positions [n_past, n_past + n) and returns the logits of the last
  // token (n_vocab floats), or of every token (n_vocab * n) with all_logits.
  // The span stays valid until the next call. Throws hart::Error when the tokens do not fit.
  std::span<const float> decode(std::span<const int32_t> tokens, bool all_logits = false);
  // As decode, for input embeddings in place of tokens (n_embd floats each, row after row: an
  // image's from a projector), appended to sequence 0. Returns the last one's logits.
  std::span<const float> decode_embeddings(std::span<const float> embd);
  // As decode with all_logits, but every token's last hidden state after the output norm
  // (n_embd * n floats): what embeddings are pooled from.
  std::span<const float> hidden_states(std::span<const int32_t> tokens);

  // As decode, each token with an input row of n_embd floats beside its embedding (an MTP block's
  // hidden-state input, model/mtp_model.h); returns the last token's logits (Logits::LAST) or
  // none (Logits::NONE).
  std::span<const float> decode_paired(std::span<const int32_t> tokens, std::span<const float> rows, Logits logits);
  // With SessionParams::keep_hidden: sequence 0's hidden states after the output norm, as the
  // last step that computed each position gave it, up to n_past() (a context shift forgets them
  // all); nullptr without.
  HiddenRows* hidden_rows() { return hidden_ ? &*hidden_ : nullptr; }

  // Appends each input's tokens to its sequence (distinct sequences), computed together: a step
  // takes at most n_batch tokens, so a longer batch runs in several. Afterwards rows(i) holds
  // input i's logits: its last token's, all its tokens', or none, as its `logits` asks. Throws
  // hart::Error, changing nothing, for a sequence out of range or named twice, a token outside
  // the vocabulary or tokens that do not fit a sequence's context.
  void decode_seqs(std::span<const SeqTokens> inputs);
  // Input i's logits of the last decode_seqs (n_vocab floats a row); valid until the next call.
  std::span<const float> rows(size_t i) const { return rows_[i]; }

  // Speculative decoding, of sequence 0 (no other sequence decodes meanwhile). After
  // begin_tentative(), the tokens decode() computes are tentative:
  // keep(n) then keeps the first n of them, as if only those had been decoded, and gives back
  // the rest (attention layers their K/V slots; a recurrent state, written past them, is
  // computed again over the n tokens from the state begin_tentative() kept: one step of n tokens,
  // unless all are kept). At most n_batch tokens may be tentative; a recurrent state needs
  // SessionParams::speculative.
  void begin_tentative();
  void keep(int n);
  bool tentative() const { return tentative_; }
  // The positions that are not tentative.
  int n_kept() const { return tentative_ ? checkpoint_n_ : seqs_[0].n; }

  int n_past(int seq = 0) const { return seqs_[size_t(seq)].n; }
  int n_ctx() const { return n_ctx_; }
  int n_seq() const { return int(seqs_.size()); }
  // Forgets positions >= n of a sequence. Returns the positions kept: n, or 0 when the state
  // cannot go back to n (a recurrent state, or a sliding window that has moved on): then all of
  // it is forgotten.
  int truncate(int n) { return truncate(0, n); }
  int truncate(int seq, int n);
  // llama.cpp's context shift of sequence 0: forgets positions [keep, keep + n_discard) and moves
  // the later ones n_discard down, turning their cached keys to the new positions (key_shift.h),
  // so that n_past() drops by n_discard and generation goes on. A recurrent state stays as it is
  // (it has taken the forgotten tokens in, as in llama.cpp). Throws hart::Error when the range is
  // not inside [0, n_past()), or while sequence 0's tokens are tentative.
  void shift(int keep, int n_discard);
  // A sequence's state as bytes (kv::SequenceStore::save) and back; copy() is the two in one.
  // Throw hart::Error when the session runs on a device that keeps the state in its own memory,
  // or while sequence 0's tokens are tentative.
  void save(int seq, std::vector<uint8_t>& out) const;
  void load(int seq, std::span<const uint8_t> bytes);
  void copy(int src, int dst);
  // The CPU alone runs the session, so save / load / copy can read and write its state.
  bool state_on_host() const { return state_on_host_; }
  const Model& model() const { return model_; }
  const kv::SequenceStore& store() const { return store_; }
  // Where its last step ran (splits, nodes per backend).
  const sched::Scheduler& scheduler() const { return executor_.scheduler(); }
  const Executor& executor() const { return executor_; }
  // The adapters' scales from the next step on (SessionParams::lora). Throws hart::Error unless
  // there is one per adapter of the model, or none.
  void set_lora(std::vector<float> scales);
  const std::vector<float>& lora() const { return lora_; }

 private:
  const Model& model_;
  int n_ctx_, n_batch_;
  kv::SequenceStore store_;
  std::vector<kv::SeqState> seqs_;
  Executor executor_;
  bool state_on_host_;  // the CPU alone runs it: the store's memory holds the state
  std::vector<float> lora_;
  Batch batch_;  // each step's, cleared and refilled: its vectors keep their capacity
  void run(std::span<const SeqTokens> inputs, bool hidden);
  void compute(std::span<const SeqTokens> inputs, bool hidden);  // run's steps, for checked inputs
  void check_inputs(std::span<const SeqTokens> inputs) const;
  void check_fits(int seq, int n) const;  // n more positions fit the sequence's context
  void check_state_access(int seq) const;
  // Appends n inputs to sequence 0 in steps of at most n_batch, `add(seq, first, count, logits)`
  // putting inputs [first, first + count) into each step's batch; returns the last step's logits
  // (`logits` is the last step's kind, the others take none).
  std::span<const float> in_steps(int n, Logits logits, const std::function<void(kv::SeqState&, int, int, Logits)>& add);
  // One step over `tokens` at sequence 0's next positions, reserved beforehand; not committed.
  const ForwardGraph& step(std::span<const int32_t> tokens, Logits logits, bool hidden);

  bool tentative_ = false;
  int checkpoint_n_ = 0;               // positions before the tentative ones
  int32_t checkpoint_cell_ = 0;        // the state cell holding the state there
  std::vector<int32_t> tentative_tokens_;

  // Per input of the last call: its rows, in the last step's graph when one step computed them
  // all, else in logits_ (inputs computed over several steps); kept from call to call.
  std::vector<std::span<const float>> rows_;
  std::vector<float> logits_;
  struct StepEntry {
    size_t input;
    int first, n;  // the input's tokens [first, first + n) in this step
    Logits logits;
    size_t row;    // its first row in the step's logits
    size_t tok_row;  // its first token in the step's batch
    int pos;         // the position of that token
  };
  std::vector<StepEntry> step_;
  std::vector<size_t> offset_;  // per input: its first row in logits_
  std::vector<int> next_;
  // How each layer rotates its cached keys, from the first forward graph (the same in all).
  std::vector<std::optional<KeyRope>> key_rope_;
  std::vector<int32_t> moved_[kv::kPools];  // a shift's moved slots, per pool

  std::optional<HiddenRows> hidden_;  // SessionParams::keep_hidden
  // A step's hidden rows of sequence 0's positions [pos, pos + n), from its token row `row` on.
  void store_hidden(const ForwardGraph& fg, size_t row, int pos, int n);
  void trim_hidden();  // forgets the rows of positions sequence 0 no longer holds
};

int default_n_ctx(const HParams& hp);

}  // namespace hart
