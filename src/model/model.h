// A loaded model: hyper-parameters plus weight tensors that point into the GGUF file's bytes
// (used in place, no conversion). The forward pass lives in llama.cpp-free form in forward.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "graph/graph.h"
#include "model/hparams.h"

namespace hart {

struct LayerWeights {
  Tensor* attn_norm = nullptr;  // (n_embd,)
  Tensor* wq = nullptr;         // (n_embd, n_head*head_dim)   [ne0, ne1]
  Tensor* wk = nullptr;         // (n_embd, n_head_kv*head_dim)
  Tensor* wv = nullptr;         // (n_embd, n_head_kv*head_dim)
  Tensor* wo = nullptr;         // (n_head*head_dim, n_embd)
  Tensor* bq = nullptr;         // qwen2 biases, optional
  Tensor* bk = nullptr;
  Tensor* bv = nullptr;
  Tensor* q_norm = nullptr;     // qwen3 per-head RMS norm weights (head_dim,), optional
  Tensor* k_norm = nullptr;
  Tensor* ffn_norm = nullptr;   // (n_embd,)
  Tensor* ffn_gate = nullptr;   // (n_embd, n_ff)
  Tensor* ffn_up = nullptr;     // (n_embd, n_ff)
  Tensor* ffn_down = nullptr;   // (n_ff, n_embd)
};

struct Model {
  std::unique_ptr<gguf::File> file;
  HParams hp;
  Context weights;               // leaf tensors over the file's bytes
  Tensor* tok_embd = nullptr;    // (n_embd, n_vocab)
  Tensor* output_norm = nullptr; // (n_embd,)
  Tensor* output = nullptr;      // (n_embd, n_vocab); == tok_embd when embeddings are tied
  Tensor* rope_freqs = nullptr;  // (n_rot/2,) Llama-3.1 frequency factors, optional
  std::vector<LayerWeights> layers;
  size_t weight_bytes = 0;       // bytes of all weight tensors

  // Takes ownership of an opened file; validates every tensor's presence, type and shape.
  static std::unique_ptr<Model> from_file(std::unique_ptr<gguf::File> file);
};

}  // namespace hart
