// The backends a session runs on (`--device et,cpu`), opened by name from the registry
// (registry.h) in the user's order, with the fallback (the CPU) last and always present, and the
// perf log they write to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/perf_log.h"

namespace hart {

class BackendSet {
 public:
  // names: e.g. {"et", "cpu"}; unknown names throw hart::Error listing the known ones.
  // perf_log: a file for the backends' and the scheduler's lines (ET_PERF, SCHED_SPLIT), or empty.
  // n_threads: the CPU backend's threads, 0 for every hardware thread. cpu_mask: their pinning
  // (see CpuBackend).
  BackendSet(const std::vector<std::string>& names, int n_threads, const std::string& perf_log,
             uint64_t cpu_mask = 0);
  BackendSet(BackendSet&&) noexcept;
  BackendSet& operator=(BackendSet&&) noexcept;
  ~BackendSet();

  // In order of preference, the fallback last.
  const std::vector<Backend*>& backends() const { return order_; }
  Backend* find(const std::string& backend_name) const;  // by Backend::name() ("ET", "CPU")
  PerfLog* perf_log() const { return log_.get(); }

 private:
  std::unique_ptr<PerfLog> log_;
  std::vector<std::unique_ptr<Backend>> owned_;
  std::vector<Backend*> order_;
};

}  // namespace hart
