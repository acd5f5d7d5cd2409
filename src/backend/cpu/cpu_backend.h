// The CPU backend: computes any graph with the kernel set chosen by kernels(), splitting each
// node's work over a persistent thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/threadpool.h"

namespace hart::cpu {

class CpuBackend final : public Backend {
 public:
  // cpu_mask (bit i = CPU i; 0: no pinning): thread i runs only on the i-th CPU of the mask
  // (round robin), the constructing thread being thread 0. Throws hart::Error for a CPU this
  // process may not use.
  explicit CpuBackend(int n_threads, uint64_t cpu_mask = 0);
  ~CpuBackend() override;

  const std::string& name() const override { return name_; }
  // Every op; false only when the kernel set cannot handle a tensor type (e.g. MUL_MAT on a
  // weight type without a dot product).
  bool supports_op(const Tensor& node) const override;
  // Throws hart::Error for unsupported nodes, tensors without memory, or bad data (a row id
  // out of range: the graph's results are then unspecified). What it derives from a graph with
  // an id (its checks, weight packs and schedule) is kept for the next compute of that graph:
  // a replayed decode step runs with no heap allocation.
  void compute(const Graph& g) override;
  int n_threads() const { return pool_.size(); }
  // Bytes of this backend's repacked weight copies (see repack.h).
  size_t repacked_bytes() const { return packs_.bytes(); }

 private:
  struct WorkBuffer;
  struct Compiled;
  // g's schedule: kept, or made now (and kept when g has an id).
  Compiled& compiled(const Graph& g);

  std::string name_ = "CPU";
  ThreadPool pool_;
  WaitWord finished_;  // pieces of steps finished, counting on across graphs
  std::unique_ptr<WorkBuffer> work_;
  WeightPacks packs_;  // MUL_MAT weights in the kernel set's panel layout
  std::vector<std::unique_ptr<Compiled>> compiled_;  // the graphs computed last, most recent last
};

}  // namespace hart::cpu
