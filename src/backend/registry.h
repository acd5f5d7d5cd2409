// The backends this build has, by name: each backend registers itself here from its own folder
// (cpu/cpu_registration.cpp, et/et_registration.cpp), so callers open "et" or "cpu" without
// knowing which backends were built. Registration runs during static initialization; nothing
// refers to a registration file, so its CMakeLists links it into programs as an object file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace hart {

class PerfLog;

// What opening a backend may use; each backend takes what applies to it.
struct BackendOptions {
  int n_threads = 1;            // CPU threads
  uint64_t cpu_mask = 0;        // CPU threads pinned round-robin to these CPUs (bit i = CPU i); 0: not pinned
  PerfLog* perf_log = nullptr;  // per-launch lines (ET_PERF), or none
};

struct BackendInfo {
  std::string name;                  // what --device accepts: "et", "cpu"
  std::vector<std::string> aliases;  // other names it accepts: "et0"
  std::string description;           // what --list-devices prints
  bool runs_every_op = false;        // the fallback (the CPU): runs whatever the others do not support
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> open;
};

// A namespace-scope RegisterBackend in a backend's own files adds it to the registry.
struct RegisterBackend {
  explicit RegisterBackend(BackendInfo info);
};

// Every registered backend: the others by name, then the fallback.
std::vector<const BackendInfo*> registered_backends();
// The backend called `name` or one of its aliases; throws hart::Error naming the known ones.
const BackendInfo& find_backend(const std::string& name);

// Splits "et,cpu" (commas or repeated flags) into lower-case names.
std::vector<std::string> split_backend_names(const std::vector<std::string>& args);

}  // namespace hart
