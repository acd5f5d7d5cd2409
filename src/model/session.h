// One sequence being generated: its KV cache, the CPU backend that computes it, and the
// number of positions already in the cache.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"

namespace hart {

namespace cpu {
class CpuBackend;
}
namespace sched {
class Devices;
}

struct SessionParams {
  int n_ctx = 0;                // 0: the model's training context, capped at 4096
  Type cache_type = Type::F16;  // F16 (as llama.cpp) or F32
  int n_threads = 0;            // 0: all hardware threads
  // Backends in order of preference (e.g. {"et", "cpu"}); empty or {"cpu"}: the CPU alone.
  // Otherwise the graph runs through the scheduler (src/sched), the CPU taking what others cannot.
  std::vector<std::string> devices;
  std::string perf_log;         // with devices: ET_PERF / SCHED_SPLIT lines go here
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
  const sched::Devices* devices() const { return devices_.get(); }

 private:
  const Model& model_;
  KvCache cache_;
  std::unique_ptr<cpu::CpuBackend> backend_;
  std::unique_ptr<sched::Devices> devices_;
  std::unique_ptr<uint8_t[]> arena_;  // intermediate tensors, reused across calls
  size_t arena_size_ = 0;
  int n_past_ = 0;
};

int default_n_ctx(const HParams& hp);

}  // namespace hart
