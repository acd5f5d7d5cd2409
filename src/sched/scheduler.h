// The graph scheduler: places each node of a graph on the first backend (in the user's order)
// whose supports_op accepts it, groups consecutive nodes of one backend into parts ("splits"),
// and runs the parts in order. Data movement at the seams is the backends' job: each part is
// told which of its results are read outside it (Backend::compute_part), and a backend with its
// own memory copies in what it reads. Views (RESHAPE, VIEW, PERMUTE, TRANSPOSE) compute nothing:
// they join the part they appear in and never start a new one.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/backend_set.h"
#include "backend/perf_log.h"

namespace hart::sched {

struct Split {
  Backend* backend = nullptr;
  Graph graph;                     // the part's nodes (leafs unused)
  std::vector<Tensor*> host_reads;  // its nodes read by other parts or by the caller
};

class Scheduler {
 public:
  // backends in order of preference; the last one must support every node it is given
  // (the CPU backend). Not owned.
  explicit Scheduler(std::vector<Backend*> backends);
  // The backends of a set (backend/backend_set.h), owned; SCHED_SPLIT lines go to its perf log.
  explicit Scheduler(BackendSet backends);

  // The backend each node goes to, grouped into splits. Throws hart::Error naming a node no
  // backend supports.
  std::vector<Split> plan(const Graph& g) const;
  // plan + run every split in order.
  void compute(const Graph& g);

  // What the last compute did, for logs and tests.
  struct Stats {
    size_t splits = 0;
    std::vector<size_t> nodes;  // compute nodes (not views) per backend, in backend order
  };
  const Stats& last_stats() const { return stats_; }
  const std::vector<Backend*>& backends() const { return backends_; }
  // With a log, every part that runs on a backend other than the first writes one line
  // "SCHED_SPLIT|backend=CPU|nodes=N|ops=RMS_NORM,MUL" (fallbacks are visible next to ET_PERF).
  void set_perf_log(PerfLog* log) { log_ = log; }

 private:
  std::unique_ptr<BackendSet> owned_;
  std::vector<Backend*> backends_;
  PerfLog* log_ = nullptr;
  Stats stats_;
};

}  // namespace hart::sched
