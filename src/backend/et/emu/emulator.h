// The emulated ET device ("sysemu"): et::Device over host memory and host threads. Device memory
// is its own allocation; copies are explicit; kernels are the device C kernels compiled for the
// host, run by HartRunner on one fiber per hart. One executor thread runs the streams' commands
// in submission order, which keeps every stream in order; the cost model times each command.
#pragma once

#include <memory>
#include <string>

#include "backend/et/cost_model.h"
#include "backend/et/device.h"

namespace hart::et::emu {

struct EmuConfig {
  std::string name = "et0";
  std::string lock_dir;        // empty: $XDG_RUNTIME_DIR, else /tmp
  uint32_t shires = 32;        // compute shires (at most 64)
  uint64_t memory_bytes = 4ull << 30;  // reserved lazily
  unsigned host_threads = 0;   // 0: one per host core
  size_t hart_stack_bytes = 64 << 10;
  CostModel cost;
};

class EmuDevice : public Device {
 public:
  // Adds a kernel written for the host (tests, host-built kernels) under a name; returns its handle.
  virtual Kernel add_kernel(std::string_view name, et_kernel_fn fn) = 0;
};

// Opens the emulated device, taking its exclusive lock (throws hart::Error when in use).
std::unique_ptr<EmuDevice> open_emulator(const EmuConfig& config = {});

}  // namespace hart::et::emu
