// The CPU backend: computes any graph with the kernel set chosen by kernels(), splitting each
// node's work over a persistent thread pool.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/threadpool.h"

namespace hart::cpu {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int n_threads);
  ~CpuBackend() override;

  const std::string& name() const override { return name_; }
  // Every op; false only when the kernel set cannot handle a tensor type (e.g. MUL_MAT on a
  // weight type without a dot product).
  bool supports_op(const Tensor& node) const override;
  // Throws hart::Error for unsupported nodes, tensors without memory, or bad data (a row id
  // out of range: the graph's results are then unspecified).
  void compute(const Graph& g) override;
  int n_threads() const { return pool_.size(); }

 private:
  struct WorkBuffer;

  std::string name_ = "CPU";
  ThreadPool pool_;
  std::unique_ptr<WorkBuffer> work_;
};

}  // namespace hart::cpu
