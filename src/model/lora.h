// LoRA adapters in llama.cpp's GGUF adapter format (general.type = adapter, adapter.type = lora,
// adapter.lora.alpha; per adapted weight `<name>.lora_a` (k, rank) and `<name>.lora_b` (rank, n),
// token_embd's as (rank, n_vocab) and (rank, n_embd)), applied at run time, never merged: a
// product W x becomes W x + s B (A x), with s = scale * alpha / rank (scale alone when alpha is
// 0), llama.cpp's llama_adapter_lora_weight::get_scale. The base weights stay as loaded, so one
// model serves requests with and without adapters; each token of a batch carries its own
// scales (Batch::lora), and an adapter whose scales are all 0 is left out of the graph.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "gguf/gguf.h"
#include "graph/graph.h"
#include "model/model.h"

namespace hart {

// llama.cpp's scale of a pair of that rank at a user scale: user * alpha / rank, or user when
// alpha is 0 (in float, in that order).
inline float lora_scale(float user, float alpha, int64_t rank) { return alpha != 0.0f ? user * alpha / float(rank) : user; }

struct LoraPair {
  Tensor* a = nullptr;  // (k, rank[, n_expert]); token_embd: (rank, n_vocab)
  Tensor* b = nullptr;  // (rank, n[, n_expert]); token_embd: (rank, n_embd)
  int64_t rank() const { return b->ne[0]; }
};

struct LoraAdapter {
  std::string path;
  float alpha = 0.0f;  // adapter.lora.alpha (0 when absent)
  std::unique_ptr<gguf::File> file;
  Context ctx;  // a and b over the file's bytes
  std::unordered_map<const Tensor*, LoraPair> pairs;  // by the base weight they adapt
  LoraPair embd;  // token_embd.weight's (looked up by rows, not multiplied), else a == nullptr

  const LoraPair* find(const Tensor* w) const {
    auto it = pairs.find(w);
    return it == pairs.end() ? nullptr : &it->second;
  }
};

// Opens an adapter for model m, checked as llama.cpp checks it (a GGUF of general.type adapter
// and adapter.type lora for m's architecture, every pair complete, its base tensor in m and the
// shapes matching it) plus the types hart multiplies. Throws hart::Error naming the file and
// the problem.
std::shared_ptr<const LoraAdapter> load_lora(const Model& m, const std::string& path,
                                             gguf::LoadMode mode = gguf::LoadMode::Memory);
// As load_lora, over a file already open (tests: a file built in memory).
std::shared_ptr<const LoraAdapter> load_lora(const Model& m, std::unique_ptr<gguf::File> file);

}  // namespace hart
