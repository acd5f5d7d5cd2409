// Runs one kernel launch on emulated harts: one cooperative fiber (ucontext, small stack) per
// hart, each minion with its matrix engine and each shire with its L2 scratchpad (tensor_unit.h),
// on a few host threads that each own a subset of the launch's shires. A fiber runs until its
// kernel returns, faults, or waits at a barrier; minion and shire barriers resolve inside one
// host thread, launch barriers by a rendezvous of all host threads. Harts waiting at a barrier
// that others never reach end the launch with a deadlock error instead of hanging.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/et/device/et_device.h"
#include "backend/et/emu/tensor_unit.h"

namespace hart::et::emu {

// Host view of device memory for a kernel: nullptr when [addr, addr + bytes) is not accessible.
using Translate = std::function<uint8_t*(uint64_t addr, uint64_t bytes)>;

struct LaunchOutcome {
  std::vector<et_counters> counters;  // one per hart, in thread_id order
  // The counters as they stood each time every hart met at a launch barrier (an uberkernel's
  // seams between sub-kernels), and when (seconds on the steady clock), for per-phase timing.
  std::vector<std::vector<et_counters>> barrier_counters;
  std::vector<std::chrono::steady_clock::time_point> barrier_times;
  // Per hart, its counters at each seam between an uberkernel's sub-kernels it passed (ET_SEAM):
  // what each sub-kernel did, whether or not harts waited for each other between them.
  std::vector<std::vector<et_counters>> seams;
  std::optional<std::string> error;
  // From a simulator that counts them (sysemu/): its cycles and retired instructions.
  std::optional<uint64_t> sim_cycles, sim_insns;
};

class HartRunner {
 public:
  HartRunner(uint32_t shires, unsigned host_threads, size_t stack_bytes);
  ~HartRunner();
  HartRunner(const HartRunner&) = delete;
  HartRunner& operator=(const HartRunner&) = delete;

  // Runs fn on every hart of the shires in shire_mask and returns when all are done (or failed).
  // Not reentrant: one launch at a time.
  LaunchOutcome run(const std::string& name, et_kernel_fn fn, const void* params, uint64_t shire_mask,
                    const Translate& translate);

  struct Fiber;
  struct Worker;
  struct Launch;

 private:
  void worker_loop(size_t index);

  uint32_t shires_;
  size_t stack_bytes_;
  uint8_t* stacks_ = nullptr;
  size_t stacks_bytes_ = 0;
  std::vector<std::unique_ptr<Fiber>> fibers_;    // by absolute hart id
  std::vector<MinionTensorState> tensor_;         // by absolute minion id: state kept across launches
  uint8_t* scratch_ = nullptr;                    // the shires' L2 scratchpads, in shire order
  size_t scratch_bytes_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;  // workers_[0] runs on the caller's thread
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  size_t participants_ = 0;
  size_t running_ = 0;
  bool stopping_ = false;
  Launch* launch_ = nullptr;
};

}  // namespace hart::et::emu
