// The transformer forward pass (Llama / Qwen2 / Qwen3) as a compute graph over one batch of new
// tokens. The tokens may come from many sequences sharing one KV cache used as a pool of slots
// (the server's continuous batching) or from one sequence whose slot i holds position i (Session).
#pragma once

#include <span>
#include <vector>

#include "graph/graph.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace hart {

enum class Logits { NONE, LAST, ALL };

// One step's tokens. Each sequence contributes a run of consecutive positions.
struct Batch {
  std::vector<int32_t> tokens;    // (n,)
  std::vector<int32_t> pos;       // (n,)
  std::vector<int64_t> slots;     // (n,) cache slots the new K/V go to
  std::vector<int32_t> ranges;    // (2n,) per token: offset into `lists`, slots attended
  std::vector<int32_t> lists;     // the sequences' slot lists, one after the other
  std::vector<int32_t> out_rows;  // tokens whose logits are computed, in this order

  // Appends a sequence's tokens at positions [n_past, n_past + tokens.size()). seq_slots lists
  // the slots of positions [0, n_past + tokens.size()): the first n_past already hold K/V, the
  // rest receive the new tokens'. Returns the index of the sequence's first logits row.
  size_t add(std::span<const int32_t> seq_slots, std::span<const int32_t> tokens, int n_past, Logits logits);
  size_t size() const { return tokens.size(); }
};

struct ForwardGraph {
  Context ctx;
  Graph graph;
  // Inputs, owned here (filled from the batch by build_forward).
  std::vector<int32_t> tokens, pos, index, out_rows;
  std::vector<int64_t> slots;
  Tensor* logits = nullptr;  // (n_vocab, out_rows.size()); nullptr when no logits were asked for
};

void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache, const Batch& batch);

// One sequence whose slot i holds position i: `tokens` at positions [n_past, n_past + n), the
// logits of the last token or of all.
void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache, std::span<const int32_t> tokens,
                   int n_past, bool all_logits);

}  // namespace hart
