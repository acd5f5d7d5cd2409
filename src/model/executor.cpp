#include "model/executor.h"

namespace hart {
namespace {

constexpr size_t kArenaAlign = 64;

uint8_t* align_up(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kArenaAlign - 1) &
                                    ~uintptr_t(kArenaAlign - 1));
}

}  // namespace

Executor::Executor(BackendSet backends) : scheduler_(std::move(backends)) {}

void Executor::run(const Graph& g) {
  const size_t need = plan_memory(g, nullptr) + kArenaAlign;
  if (arena_size_ < need) {
    arena_.reset(new uint8_t[need]);
    arena_size_ = need;
  }
  plan_memory(g, align_up(arena_.get()));
  scheduler_.compute(g);
}

}  // namespace hart
