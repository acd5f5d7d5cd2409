#include "model/executor.h"

#include <algorithm>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "sched/scheduler.h"

namespace hart {
namespace {

constexpr size_t kArenaAlign = 64;

uint8_t* align_up(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kArenaAlign - 1) &
                                    ~uintptr_t(kArenaAlign - 1));
}

}  // namespace

Executor::Executor(const ExecutorParams& params) {
  const int n_threads =
      params.n_threads > 0 ? params.n_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const bool cpu_only =
      params.devices.empty() || (params.devices.size() == 1 && params.devices[0] == "cpu");
  if (cpu_only)
    cpu_ = std::make_unique<cpu::CpuBackend>(n_threads, params.cpu_mask);
  else
    devices_ = std::make_unique<sched::Scheduler>(BackendSet(params.devices, n_threads, params.perf_log, params.cpu_mask));
}

Executor::~Executor() = default;

void Executor::run(const Graph& g) {
  const size_t need = plan_memory(g, nullptr) + kArenaAlign;
  if (arena_size_ < need) {
    arena_.reset(new uint8_t[need]);
    arena_size_ = need;
  }
  plan_memory(g, align_up(arena_.get()));
  if (devices_)
    devices_->compute(g);
  else
    cpu_->compute(g);
}

}  // namespace hart
