// One sequence being generated: its KV cache, the executor that computes its graphs, and the
// number of positions already in the cache.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/executor.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace hart {

struct SessionParams : ExecutorParams {
  int n_ctx = 0;                // 0: the model's training context, capped at 4096
  Type cache_type = Type::F16;  // F16 (as llama.cpp) or F32
};

class Session {
 public:
  Session(const Model& model, const SessionParams& params);
  ~Session();

  // Appends `tokens` at positions [n_past, n_past + n) and returns the logits of the last
  // token (n_vocab floats), or of every token (n_vocab * n) with all_logits.
  // The span stays valid until the next call. Throws hart::Error when the tokens do not fit.
  std::span<const float> decode(std::span<const int32_t> tokens, bool all_logits = false);

  int n_past() const { return n_past_; }
  int n_ctx() const { return cache_.n_ctx(); }
  // Forgets positions >= n (keeps the cached prefix [0, n)).
  void truncate(int n);
  const Model& model() const { return model_; }
  const KvCache& cache() const { return cache_; }
  // The backends when SessionParams::devices chose more than the CPU, else nullptr.
  const sched::Scheduler* devices() const { return executor_.devices(); }

 private:
  const Model& model_;
  KvCache cache_;
  Executor executor_;
  int n_past_ = 0;
};

int default_n_ctx(const HParams& hp);

}  // namespace hart
