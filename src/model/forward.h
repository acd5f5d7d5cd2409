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
  // Input embeddings in place of the tokens' (n_embd * n, llama_batch's embd: image embeddings
  // from a projector); empty for a batch of tokens. A batch holds one kind or the other.
  std::vector<float> embd;
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
  // LoRA adapters (model/lora.h): n_lora scales a token, the user scale of each of the model's
  // adapters (Model::loras), token after token; empty while no sequence added gave any.
  int n_lora = 0;
  std::vector<float> lora;

  // Appends a sequence's new tokens at positions [s.n, s.n + tokens.size()), for which
  // SequenceStore::reserve has taken the state, with the sequence's adapter scales (one per
  // adapter of the model, or none: all 0). Returns the index of its first logits row.
  size_t add(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const int32_t> tokens, Logits logits,
             std::span<const float> lora_scales = {});
  // As add, for embeddings of n_embd floats each (their tokens read as 0).
  size_t add_embeddings(const kv::SeqState& s, const kv::StateLayout& layout, std::span<const float> embd, int n_embd,
                        Logits logits, std::span<const float> lora_scales = {});
  size_t size() const { return tokens.size(); }
  // Empties the batch, keeping the vectors' memory for the next step's.
  void clear();
};

// What a forward graph's structure depends on. Batches of one shape build the same graph but
// for its inputs' values, so a graph built for one is replayed for the others (Executor) after
// write_inputs. The PAGED_ATTN index is the one input whose length grows with the context: it is
// sized in steps of kIndexStep entries, the unused tail ignored, so that a decode step keeps its
// graph for that many tokens.
struct BatchShape {
  static constexpr int64_t kIndexStep = 256;
  int64_t n = 0;                         // tokens
  int64_t n_out = 0;                     // logits rows
  bool out_in_order = false;             // out_rows is 0..n-1: the graph gathers no rows
  bool embd = false;                     // embeddings in, not tokens
  int64_t index_size[kv::kPools] = {};   // PAGED_ATTN index entries per pool
  std::vector<int32_t> seq_tokens;       // new tokens per sequence, in batch order
  std::vector<bool> lora_used;           // per adapter: some token's scale is not 0

  explicit BatchShape(const Batch& b);
  bool matches(const Batch& b) const;
};

// The inputs a forward graph reads, filled from a batch by write_inputs.
enum class InputKind { TOKENS, EMBD, POS, SLOTS, ATTN_INDEX, CELLS_READ, CELLS_WRITE, OUT_ROWS, LORA_SCALE };
struct ForwardInput {
  InputKind kind;
  int which;  // SLOTS, ATTN_INDEX: the KV pool; CELLS_*: the batch's first sequence of the run;
              // LORA_SCALE: its entry in ForwardGraph::lora_scales
  Tensor* t;  // I32 or I64 (n,), or EMBD's F32 (n_embd, n), its data held by the ForwardGraph
};

struct ForwardGraph {
  Context ctx;
  Graph graph;
  std::vector<ForwardInput> inputs;
  std::deque<std::vector<int32_t>> i32;  // the inputs' data (stable addresses)
  std::deque<std::vector<int64_t>> i64;
  std::deque<std::vector<float>> f32;
  // A LORA_SCALE input, F32 (1, tokens or logits rows): each row's scale of adapter `adapter`
  // for its pairs of rank `rank` (lora_scale() of the batch's user scale).
  struct LoraScale {
    size_t adapter;
    int64_t rank;
    float alpha;
    bool out_rows;
  };
  std::vector<LoraScale> lora_scales;
  std::vector<float> embd;  // EMBD's data
  Tensor* logits = nullptr;  // (n_vocab, out_rows); nullptr when no logits were asked for
  // Per layer: the ROPE node whose output the layer writes into its K cache; nullptr for a layer
  // without a cache of its own or whose keys are not rotated. A context shift (key_shift.h)
  // rotates cached keys again the same way.
  std::vector<const Tensor*> key_rope;
  // Set before build_forward: `logits` is instead the rows' last hidden states after the output
  // norm, (n_embd, out_rows), what llama.cpp's embeddings are pooled from.
  bool hidden_states = false;
  // Set before build_forward: hidden_all is also computed, every token's last hidden state after
  // the output norm, (n_embd, n), whatever rows the logits are of (what an MTP block drafts from:
  // llama.cpp's h_nextn).
  bool keep_hidden = false;
  Tensor* hidden_all = nullptr;
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
  Tensor* embd = nullptr;                  // F32 (n_embd, n) for a batch of embeddings, else nullptr
  Tensor* pos = nullptr;                   // I32 (n,)
  Tensor* slots[kv::kPools] = {};          // I64 (n,) per pool in use
  Tensor* attn_index[kv::kPools] = {};     // PAGED_ATTN index per pool in use
  std::vector<Tensor*> writes;             // state updates the graph must compute besides logits
  std::vector<std::pair<Tensor*, Tensor*>> kv_written;  // per layer: its K and V cache as written this step
  Tensor* hidden = nullptr;  // the output rows after the output norm (set by lm_head)
  std::vector<bool> lora_used;  // per adapter of m.loras: whether the batch uses it
  bool at_out_rows = false;     // set by output_rows: the products after it are of the logits rows


  // The batch's sequences as runs (built on first use).
  const std::vector<SeqRun>& seq_runs();

  // A new input of n elements (I32 or I64), filled by write_inputs.
  Tensor* input(InputKind kind, int which, Type type, int64_t n, const char* name);
  // x (d, n) -> the rows whose logits were asked for (d, n_out); nullptr when there are none.
  Tensor* output_rows(Tensor* x);
  // Adapter i's scales for its pairs of that rank, F32 (1, rows): a row per token, or per
  // logits row after output_rows (built on first use).
  Tensor* lora_scale(size_t i, int64_t rank);

 private:
  std::vector<SeqRun> runs_;
};

// Builds the forward graph of batch's shape and writes batch's inputs into it. n_ctx: the longest
// a sequence of the batch may grow (it picks Phi-3's RoPE factors).
void build_forward(ForwardGraph& fg, const Model& m, const kv::SequenceStore& store, const Batch& batch, int n_ctx);
// Writes batch's tokens, positions, slots, ... into fg's inputs; batch has the shape fg was built
// for (BatchShape::matches). Allocates nothing.
void write_inputs(ForwardGraph& fg, const Batch& batch);
// Per adapter of the batch (Batch::n_lora): whether some token's scale is not 0.
std::vector<bool> lora_used(const Batch& batch);

// What a model's sequences carry between steps, from its layer configs.
kv::StateLayout state_layout(const HParams& hp);

}  // namespace hart
