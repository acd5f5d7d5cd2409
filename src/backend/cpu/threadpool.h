// A persistent pool of worker threads for computing graphs: run(fn) executes fn(ith, nth) on
// every thread (the caller is thread 0) and returns when all are done; barrier() separates the
// phases of one run.
//
// Waiting (for the next run, or at a barrier) spins briefly with `pause` and then sleeps on a
// futex that the releasing thread wakes. Never sched_yield: on a machine busier than its cores
// (other processes, or more threads than cores) a yield hands the core to another process for a
// whole time slice, which turned every barrier of a decode step into milliseconds.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <thread>
#include <vector>

namespace hart::cpu {

// One 32-bit word that threads wait on until it changes: spin, then futex sleep.
class WaitWord {
 public:
  uint32_t load() const { return v_.load(std::memory_order_acquire); }
  // Returns once the word differs from `old`, spinning for about `spin_us` microseconds first.
  void wait_change(uint32_t old, int spin_us) const;
  // Sets the word to v and wakes every sleeping waiter.
  void publish(uint32_t v);
  // Adds d to the word and wakes every sleeping waiter.
  void add(uint32_t d);
  // Returns once the word has reached `target` (counting with wrap-around).
  void wait_reach(uint32_t target, int spin_us) const;

 private:
  std::atomic<uint32_t> v_{0};
  mutable std::atomic<int> sleepers_{0};
};

// The work of one run(): a callable borrowed for the length of the call, never copied. A
// std::function would allocate for a lambda capturing more than two pointers, as every graph's
// does, and a decode step makes no heap allocation.
class Job {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Job>>>
  Job(F&& f)  // NOLINT: implicit, so that run([&](int ith, int nth) { ... }) reads naturally
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int ith, int nth) { (*static_cast<std::remove_reference_t<F>*>(o))(ith, nth); }) {}
  void operator()(int ith, int nth) const { call_(obj_, ith, nth); }

 private:
  void* obj_;
  void (*call_)(void*, int, int);
};

class ThreadPool {
 public:
  // n_threads >= 1, counting the caller. `cpus` (optional): pin thread i to cpus[i % size], the
  // calling thread (thread 0) included, with sched_setaffinity.
  explicit ThreadPool(int n_threads, const std::vector<int>& cpus = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_; }
  // Runs fn(ith, size()) on every thread; fn must not throw. Not reentrant.
  void run(Job fn);
  // Waits until every thread of the current run() has arrived. Call from inside run() only,
  // from all threads the same number of times.
  void barrier();
  // How long waits inside a run spin before sleeping.
  static constexpr int kSpinUs = 50;

 private:
  void worker(int ith);

  const int n_;
  std::vector<std::thread> threads_;
  const Job* job_ = nullptr;
  std::atomic<bool> stop_{false};

  alignas(64) WaitWord start_;       // bumped for every run; workers wait for a change
  alignas(64) std::atomic<int> running_{0};  // workers still inside the current job
  alignas(64) WaitWord done_;        // bumped by the last worker to finish a job
  alignas(64) std::atomic<int> arrived_{0};  // threads at the current barrier
  alignas(64) WaitWord phase_;       // bumped when a barrier opens
};

// Throws hart::Error unless this process may run on `cpu`.
void check_cpu_allowed(int cpu);
// Sets the calling thread's CPU affinity to one CPU; throws hart::Error when the OS refuses.
void pin_current_thread(int cpu);
// The CPUs set in a mask (bit i = CPU i), lowest first.
std::vector<int> cpus_of_mask(uint64_t mask);

}  // namespace hart::cpu
