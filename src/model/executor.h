// Runs forward graphs on the backends it is handed (a BackendSet the caller opened: the CPU
// alone, or e.g. the ET device with the CPU taking what it cannot): plans their intermediate
// tensors into one arena that is reused from call to call, then lets the scheduler place and
// compute them. Session (one sequence) and the server's engine (many) both run on one.
#pragma once

#include <memory>

#include "backend/backend_set.h"
#include "graph/graph.h"
#include "sched/scheduler.h"

namespace hart {

class Executor {
 public:
  explicit Executor(BackendSet backends);

  // Plans g's memory and computes it; results stay valid until the next call.
  void run(const Graph& g);
  // Where the last graph ran (splits, nodes per backend) and on which backends.
  const sched::Scheduler& scheduler() const { return scheduler_; }

 private:
  sched::Scheduler scheduler_;
  std::unique_ptr<uint8_t[]> arena_;
  size_t arena_size_ = 0;
};

}  // namespace hart
