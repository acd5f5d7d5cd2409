// The transformer forward pass (Llama / Qwen2 / Qwen3) as a compute graph over one batch of
// new tokens, appended to a KV cache at positions [n_past, n_past + n_tokens).
#pragma once

#include <vector>

#include "graph/graph.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace hart {

struct ForwardGraph {
  Context ctx;
  Graph graph;
  // Inputs, owned here; fill them before compute.
  std::vector<int32_t> tokens;  // (n_tokens,)
  std::vector<int32_t> pos;     // (n_tokens,)
  std::vector<int64_t> slots;   // (n_tokens,) cache rows the new K/V go to
  std::vector<float> mask;      // (n_tokens, n_kv) causal mask, 0 or -inf
  Tensor* logits = nullptr;     // (n_vocab, n_tokens) or (n_vocab, 1) for the last token only
};

void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache,
                            std::span<const int32_t> tokens, int n_past, bool all_logits);

}  // namespace hart
