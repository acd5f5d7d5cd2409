// What runs a launch's harts for the emulated device (emulator.h): the host fibers of HartRunner
// (the built-in emulator), or the vendor's simulator running the kernels as a minion program
// (sysemu/sysemu_runner.h). The device around it (memory, streams, copies, the cost model) is
// the same for both.
#pragma once

#include <cstdint>
#include <string>

#include "backend/et/emu/harts.h"
#include "backend/et/emu/memory.h"

namespace hart::et::emu {

struct LaunchRequest {
  std::string name;
  uint32_t kernel_id = 0;  // the device's handle: below ET_KERNEL_COUNT, the id in kernels.def
  et_kernel_fn fn = nullptr;
  const void* params = nullptr;
  size_t params_bytes = 0;
  uint64_t shire_mask = 0;
};

class LaunchRunner {
 public:
  virtual ~LaunchRunner() = default;
  // Runs the launch on memory; a device-side failure is the outcome's error.
  virtual LaunchOutcome run(const LaunchRequest& r, DeviceMemory& memory) = 0;
};

}  // namespace hart::et::emu
