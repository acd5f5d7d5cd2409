// The KV cache of one sequence: per layer, K and V rows (n_head_kv*head_dim values each) for
// n_ctx positions, in F16 (default, as llama.cpp) or F32.
#pragma once

#include <memory>
#include <vector>

#include "graph/graph.h"
#include "model/hparams.h"

namespace hart {

class KvCache {
 public:
  KvCache(const HParams& hp, int n_ctx, Type type);

  int n_ctx() const { return n_ctx_; }
  Type type() const { return type_; }
  size_t bytes() const { return bytes_; }
  // Leaf tensors (n_embd_kv, n_ctx) over the cache memory of layer il.
  Tensor* k(int il) const { return k_[il]; }
  Tensor* v(int il) const { return v_[il]; }

 private:
  int n_ctx_;
  Type type_;
  size_t bytes_ = 0;
  Context ctx_;
  std::unique_ptr<uint8_t[]> mem_;
  std::vector<Tensor*> k_, v_;
};

}  // namespace hart
