// The emulated ET device: et::Device over host memory and host threads. Device memory is its own
// allocation; copies are explicit; kernels are the device C kernels compiled for the host, run by
// HartRunner on one fiber per hart (or, on the et-sysemu device, by the vendor's simulator:
// launch_runner.h). One executor thread runs the streams' commands
// in submission order, which keeps every stream in order; the cost model times each command.
#pragma once

#include <memory>
#include <string>

#include "backend/et/command_queue.h"
#include "backend/et/cost_model.h"
#include "backend/et/device.h"
#include "backend/et/emu/launch_runner.h"

namespace hart::et::emu {

struct EmuConfig {
  std::string name = "et0";
  std::string lock_dir;        // empty: $XDG_RUNTIME_DIR, else /tmp
  uint32_t shires = 32;        // compute shires (at most 64)
  uint64_t memory_bytes = 4ull << 30;  // reserved lazily
  DeviceAddr memory_base = DeviceMemory::kBase;  // the first device address
  unsigned host_threads = 0;   // 0: one per host core
  size_t hart_stack_bytes = 64 << 10;
  CostModel cost;
};

class EmuDevice : public Device {
 public:
  // Adds a kernel written for the host (tests, host-built kernels) under a name; returns its handle.
  virtual Kernel add_kernel(std::string_view name, et_kernel_fn fn) = 0;
};

// A launch's outcome as its profile record: the kernels' counters, the modelled device time of
// each phase and of the whole (cost), a simulator's own counts, the sub-kernels' work.
void record_outcome(const CostModel& cost, const LaunchOutcome& out, CommandQueue& queue, ProfileRecord& rec);

// Opens the emulated device, taking its exclusive lock (throws hart::Error when in use).
std::unique_ptr<EmuDevice> open_emulator(const EmuConfig& config = {});
// The same device whose launches run on runner (the vendor's simulator: sysemu/).
std::unique_ptr<EmuDevice> open_emulated_device(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner);

}  // namespace hart::et::emu
