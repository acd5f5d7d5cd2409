// Runs forward graphs: plans their intermediate tensors into one arena that is reused from call
// to call, and computes them on the CPU backend, or through the scheduler (src/sched) when other
// devices were chosen. Session (one sequence) and the server's engine (many) both run on one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hart {

namespace cpu {
class CpuBackend;
}
namespace sched {
class Scheduler;
}

struct ExecutorParams {
  int n_threads = 0;      // 0: all hardware threads
  uint64_t cpu_mask = 0;  // CPU threads pinned round-robin to these CPUs (bit i = CPU i); 0: not pinned
  // Backends in order of preference (e.g. {"et", "cpu"}); empty or {"cpu"}: the CPU alone.
  std::vector<std::string> devices;
  std::string perf_log;  // with devices: ET_PERF / SCHED_SPLIT lines go here
};

class Executor {
 public:
  explicit Executor(const ExecutorParams& params);
  ~Executor();

  // Plans g's memory and computes it; results stay valid until the next call.
  void run(const Graph& g);
  // The backends when more than the CPU was chosen, else nullptr.
  const sched::Scheduler* devices() const { return devices_.get(); }

 private:
  std::unique_ptr<cpu::CpuBackend> cpu_;
  std::unique_ptr<sched::Scheduler> devices_;
  std::unique_ptr<uint8_t[]> arena_;
  size_t arena_size_ = 0;
};

}  // namespace hart
