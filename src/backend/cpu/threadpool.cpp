#include "backend/cpu/threadpool.h"

#include <chrono>
#include <climits>
#include <string>

#include "common/error.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
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

// Between graphs of a decode loop the caller samples and builds the next graph (~0.1-0.5 ms);
// within a graph, barriers usually open within a few microseconds.
constexpr int kStartSpinUs = 500;

#if defined(__linux__)
void futex_wait(const std::atomic<uint32_t>* word, uint32_t old) {
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAIT_PRIVATE, old, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}
#else
void futex_wait(const std::atomic<uint32_t>* word, uint32_t old) { word->wait(old, std::memory_order_acquire); }
void futex_wake_all(std::atomic<uint32_t>* word) { word->notify_all(); }
#endif

}  // namespace

void WaitWord::wait_change(uint32_t old, int spin_us) const {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until = Clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (v_.load(std::memory_order_acquire) != old) return;
      cpu_relax();
    }
    if (Clock::now() >= until) break;
  }
  // Announce the sleep before the last check: publish() stores the word, then reads sleepers_
  // (both seq_cst), so either it sees this sleeper or this check sees the new value.
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (v_.load(std::memory_order_seq_cst) == old) futex_wait(&v_, old);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void WaitWord::publish(uint32_t v) {
  v_.store(v, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&v_);
}

void WaitWord::add(uint32_t d) {
  v_.fetch_add(d, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&v_);
}

void WaitWord::wait_reach(uint32_t target, int spin_us) const {
  for (uint32_t v = load(); int32_t(v - target) < 0; v = load()) wait_change(v, spin_us);
}

ThreadPool::ThreadPool(int n_threads, const std::vector<int>& cpus) : n_(n_threads) {
  if (n_threads < 1) throw Error("thread pool: " + std::to_string(n_threads) + " threads requested (need >= 1)");
  for (int cpu : cpus) check_cpu_allowed(cpu);
  if (!cpus.empty()) pin_current_thread(cpus[0]);
  threads_.reserve(size_t(n_ - 1));
  for (int i = 1; i < n_; i++)
    threads_.emplace_back([this, i, cpu = cpus.empty() ? -1 : cpus[size_t(i) % cpus.size()]] {
      if (cpu >= 0) pin_current_thread(cpu);  // checked above: cannot throw
      worker(i);
    });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  start_.publish(start_.load() + 1);
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::run(Job fn) {
  if (n_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  running_.store(n_ - 1, std::memory_order_relaxed);
  start_.publish(start_.load() + 1);
  fn(0, n_);
  // Until every worker is out of fn. A bump of done_ is not enough: the worker that ended the
  // previous run may bump it only now, after this run started (its running_ reached 0 first), and
  // returning on that bump left a worker inside fn after run() returned (a CPU graph then hung).
  for (uint32_t done = done_.load(); running_.load(std::memory_order_acquire) != 0; done = done_.load())
    done_.wait_change(done, kStartSpinUs);
}

void ThreadPool::worker(int ith) {
  uint32_t seen = 0;
  for (;;) {
    start_.wait_change(seen, kStartSpinUs);
    seen = start_.load();
    if (stop_.load(std::memory_order_relaxed)) return;
    (*job_)(ith, n_);
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.add(1);
  }
}

void ThreadPool::barrier() {
  if (n_ == 1) return;
  const uint32_t phase = phase_.load();
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    phase_.publish(phase + 1);
    return;
  }
  phase_.wait_change(phase, kSpinUs);
}

void check_cpu_allowed(int cpu) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || !CPU_ISSET(cpu, &allowed))
    throw Error("CPU " + std::to_string(cpu) + " is not one this process may run on");
#else
  (void)cpu;
#endif
}

void pin_current_thread(int cpu) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw Error("cannot pin a thread to CPU " + std::to_string(cpu) + " (not online, or outside this process's set)");
#else
  (void)cpu;
#endif
}

std::vector<int> cpus_of_mask(uint64_t mask) {
  std::vector<int> cpus;
  for (int i = 0; i < 64; i++)
    if (mask >> i & 1) cpus.push_back(i);
  return cpus;
}

}  // namespace hart::cpu
