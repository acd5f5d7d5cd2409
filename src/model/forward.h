// The forward pass of a model over one batch of new tokens, as a compute graph. The tokens may
// come from many sequences (the server's continuous batching) or from one (Session); each
// sequence contributes a run of consecutive positions, and its state between steps lives in a
// kv::SequenceStore. The architecture's build function (src/model/arch/) writes the graph
// through a Forward, using the shared pieces of src/model/blocks.h.
#pragma once

#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "kv/sequence_state.h"
#include "model/model.h"

namespace hart {

enum class Logits { NONE, LAST, ALL };

// One step's tokens.
struct Batch {
  std::vector<int32_t> tokens;    // (n,)
  std::vector<int32_t> pos;       // (n,)
  std::vector<int32_t> out_rows;  // tokens whose logits are computed, in this order
  // Per KV pool: the slot each token's K/V goes to, and what it attends: token t reads the slots
  // lists[ranges[2t] .. ranges[2t] + ranges[2t+1]) (causality and windows are in the lists).
  struct Attn {
    std::vector<int64_t> slots;
    std::vector<int32_t> ranges;
    std::vector<int32_t> lists;
  } attn[kv::kPools];
  // Per sequence, in batch order: its tokens [first, first + n) and the state cells it reads
  // and writes (recurrent layers).
  struct Seq {
    int32_t first, n, cell_src, cell;
  };
  std::vector<Seq> seqs;

  // Appends a sequence's new tokens at positions [s.n, s.n + tokens.size()), for which
  // SequenceStore::reserve has taken the state. Returns the index of its first logits row.
  size_t add(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const int32_t> tokens, Logits logits);
  size_t size() const { return tokens.size(); }
};

struct ForwardGraph {
  Context ctx;
  Graph graph;
  std::deque<std::vector<int32_t>> i32;  // input data, owned here (stable addresses)
  std::deque<std::vector<int64_t>> i64;
  Tensor* logits = nullptr;  // (n_vocab, out_rows); nullptr when no logits were asked for
  // Set before build_forward: `logits` is instead the rows' last hidden states after the output
  // norm, (n_embd, out_rows), what llama.cpp's embeddings are pooled from.
  bool hidden_states = false;
};

// Consecutive sequences of a batch with the same number of new tokens: a recurrent layer
// computes them as one (.., n_tok, n_seq) block. Its tokens are [first, first + n_tok * n_seq).
struct SeqRun {
  int64_t first, n_tok, n_seq;
  Tensor* read;   // I32 (n_seq,): the state cells the sequences read
  Tensor* write;  // I64 (n_seq,): the cells they write
};

// What an architecture's build function works with.
struct Forward {
  Forward(ForwardGraph& fg, const Model& m, const kv::SequenceStore& store, const Batch& batch, int n_ctx);

  Context& c;
  ForwardGraph& fg;
  const Model& m;
  const HParams& hp;
  const Weights& w;
  const kv::SequenceStore& store;
  const Batch& batch;
  int n_ctx;                               // the longest a sequence may grow
  int64_t n;                               // tokens in the batch
  Tensor* tokens = nullptr;                // I32 (n,)
  Tensor* pos = nullptr;                   // I32 (n,)
  Tensor* slots[kv::kPools] = {};          // I64 (n,) per pool in use
  Tensor* attn_index[kv::kPools] = {};     // PAGED_ATTN index per pool in use
  std::vector<Tensor*> writes;             // state updates the graph must compute besides logits
  std::vector<std::pair<Tensor*, Tensor*>> kv_written;  // per layer: its K and V cache as written this step
  Tensor* hidden = nullptr;  // the output rows after the output norm (set by lm_head)


  // The batch's sequences as runs (built on first use).
  const std::vector<SeqRun>& seq_runs();

  Tensor* input_i32(std::vector<int32_t> data, const char* name);
  Tensor* input_i64(std::vector<int64_t> data, const char* name);
  // x (d, n) -> the rows whose logits were asked for (d, n_out); nullptr when there are none.
  Tensor* output_rows(Tensor* x);

 private:
  std::vector<SeqRun> runs_;
};

// n_ctx: the longest a sequence of the batch may grow (it picks Phi-3's RoPE factors).
void build_forward(ForwardGraph& fg, const Model& m, const kv::SequenceStore& store, const Batch& batch, int n_ctx);

// What a model's sequences carry between steps, from its layer configs.
kv::StateLayout state_layout(const HParams& hp);

}  // namespace hart
