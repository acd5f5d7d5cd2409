// One sequence being generated: its state (KV cache and any recurrent state, in a
// kv::SequenceStore of its own), the executor that computes its graphs, and the number of
// positions already computed.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/sequence_state.h"
#include "model/executor.h"
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
};

class Session {
 public:
  // Runs on `backends` (backend/backend_set.h: e.g. BackendSet({"cpu"}, n_threads, "")).
  Session(const Model& model, const SessionParams& params, BackendSet backends);
  ~Session();

  // Appends `tokens` at positions [n_past, n_past + n) and returns the logits of the last
  // token (n_vocab floats), or of every token (n_vocab * n) with all_logits.
  // The span stays valid until the next call. Throws hart::Error when the tokens do not fit.
  std::span<const float> decode(std::span<const int32_t> tokens, bool all_logits = false);
  // As decode, for input embeddings in place of tokens (n_embd floats each, row after row: an
  // image's from a projector), at the next positions. Returns the last one's logits.
  std::span<const float> decode_embeddings(std::span<const float> embd);
  // As decode with all_logits, but every token's last hidden state after the output norm
  // (n_embd * n floats): what embeddings are pooled from.
  std::span<const float> hidden_states(std::span<const int32_t> tokens);

  // Speculative decoding. After begin_tentative(), the tokens decode() computes are tentative:
  // keep(n) then keeps the first n of them, as if only those had been decoded, and gives back
  // the rest (attention layers their K/V slots; a recurrent state, written past them, is
  // computed again over the n tokens from the state begin_tentative() kept: one step of n tokens,
  // unless all are kept). At most n_batch tokens may be tentative; a recurrent state needs
  // SessionParams::speculative.
  void begin_tentative();
  void keep(int n);
  bool tentative() const { return tentative_; }
  // The positions that are not tentative.
  int n_kept() const { return tentative_ ? checkpoint_n_ : seq_.n; }

  int n_past() const { return seq_.n; }
  int n_ctx() const { return n_ctx_; }
  // Forgets positions >= n. Returns the positions kept: n, or 0 when the state cannot go back
  // to n (a recurrent state, or a sliding window that has moved on): then all is forgotten.
  int truncate(int n);
  // llama.cpp's context shift: forgets positions [keep, keep + n_discard) and moves the later
  // ones n_discard down, turning their cached keys to the new positions (key_shift.h), so that
  // n_past() drops by n_discard and generation goes on. A recurrent state stays as it is (it has
  // taken the forgotten tokens in, as in llama.cpp). Throws hart::Error when the range is not
  // inside [0, n_past()).
  void shift(int keep, int n_discard);
  const Model& model() const { return model_; }
  const kv::SequenceStore& store() const { return store_; }
  // Where its last step ran (splits, nodes per backend).
  const sched::Scheduler& scheduler() const { return executor_.scheduler(); }
  const Executor& executor() const { return executor_; }

 private:
  const Model& model_;
  int n_ctx_, n_batch_;
  kv::SequenceStore store_;
  kv::SeqState seq_;
  Executor executor_;
  Batch batch_;  // each step's, cleared and refilled: its vectors keep their capacity
  // tokens, or with `embd` non-empty its embeddings (tokens then empty).
  std::span<const float> run(std::span<const int32_t> tokens, std::span<const float> embd, bool all_rows, bool hidden);
  // One step over `tokens` (or embeddings) at the sequence's next positions, reserved beforehand;
  // not committed.
  const ForwardGraph& step(std::span<const int32_t> tokens, std::span<const float> embd, Logits logits, bool hidden);

  bool tentative_ = false;
  int checkpoint_n_ = 0;               // positions before the tentative ones
  int32_t checkpoint_cell_ = 0;        // the state cell holding the state there
  std::vector<int32_t> tentative_tokens_;

  std::vector<float> logits_;  // all_logits of a prompt computed in several steps
  // How each layer rotates its cached keys, from the first forward graph (the same in all).
  std::vector<std::optional<KeyRope>> key_rope_;
  std::vector<int32_t> moved_[kv::kPools];  // a shift's moved slots, per pool
};

int default_n_ctx(const HParams& hp);

}  // namespace hart
