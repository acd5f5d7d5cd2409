// The backends a session runs on (`--device et,cpu`), in the user's order with the CPU always
// last, and the scheduler over them. "cpu" alone keeps the plain CPU path.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/perf_log.h"
#include "sched/scheduler.h"

namespace hart::sched {

// The names --device accepts ("cpu", and "et" when built with HART_ET), with a description.
struct DeviceInfo {
  std::string name, description;
};
std::vector<DeviceInfo> list_devices();

class Devices {
 public:
  // names: e.g. {"et", "cpu"}; unknown names throw hart::Error listing the known ones.
  // perf_log: a file for ET_PERF / SCHED_SPLIT lines, or empty.
  // cpu_mask: the CPU backend's thread pinning (see CpuBackend).
  Devices(const std::vector<std::string>& names, int n_threads, const std::string& perf_log,
          uint64_t cpu_mask = 0);
  ~Devices();

  void compute(const Graph& g) { scheduler_->compute(g); }
  const Scheduler& scheduler() const { return *scheduler_; }
  Backend* find(const std::string& backend_name) const;  // by Backend::name() ("ET", "CPU")

 private:
  std::unique_ptr<PerfLog> log_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<Scheduler> scheduler_;
};

// Parses "et,cpu" (commas or repeated flags) into lower-case names.
std::vector<std::string> parse_device_list(const std::vector<std::string>& args);

}  // namespace hart::sched
