// A persistent pool of worker threads for computing graphs: run(fn) executes fn(ith, nth) on
// every thread (the caller is thread 0) and returns when all are done; barrier() separates the
// nodes of a graph inside one run. Between runs workers spin briefly (the next graph usually
// follows within microseconds during decoding) and then sleep on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hart::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads >= 1, counting the caller
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_; }
  // Runs fn(ith, size()) on every thread; fn must not throw. Not reentrant.
  void run(const std::function<void(int ith, int nth)>& fn);
  // Waits until every thread of the current run() has arrived. Call from inside run() only,
  // from all threads the same number of times.
  void barrier();

 private:
  void worker(int ith);

  const int n_;
  std::vector<std::thread> threads_;

  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // bumped for every run; workers wait for a change
  std::atomic<int> running_{0};          // workers still inside the current job
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;

  std::atomic<int> barrier_count_{0};
  std::atomic<uint32_t> barrier_phase_{0};
};

}  // namespace hart::cpu
