#include "backend/cpu/threadpool.h"

#include "common/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hart::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__riscv)
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Spins on `done` briefly, then yields: with more threads than cores (tests run 3 threads on 2
// cores) a pure spin would burn the time slice the awaited thread needs.
template <class Done>
void spin_wait(Done done) {
  for (int i = 0; i < 2048; i++) {
    if (done()) return;
    cpu_relax();
  }
  while (!done()) std::this_thread::yield();
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_(n_threads) {
  if (n_threads < 1) throw Error("thread pool: " + std::to_string(n_threads) + " threads requested (need >= 1)");
  threads_.reserve(size_t(n_ - 1));
  for (int i = 1; i < n_; i++) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  if (n_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  running_.store(n_ - 1, std::memory_order_relaxed);
  {
    // Under the mutex so a worker between its last check and its wait cannot miss the bump.
    std::lock_guard lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  fn(0, n_);
  spin_wait([&] { return running_.load(std::memory_order_acquire) == 0; });
}

void ThreadPool::worker(int ith) {
  uint64_t seen = 0;
  for (;;) {
    constexpr int kSpins = 1 << 14;  // ~ tens of microseconds before sleeping
    auto changed = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    int spins = 0;
    while (!changed() && spins++ < kSpins) cpu_relax();
    if (!changed()) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, changed);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    (*job_)(ith, n_);
    running_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::barrier() {
  if (n_ == 1) return;
  const uint32_t phase = barrier_phase_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_phase_.fetch_add(1, std::memory_order_release);
    return;
  }
  spin_wait([&] { return barrier_phase_.load(std::memory_order_acquire) != phase; });
}

}  // namespace hart::cpu
