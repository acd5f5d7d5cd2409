#include "backend/cpu/threadpool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace hart::cpu {
namespace {

TEST(ThreadPool, RunsEveryThreadOnceWithItsIndex) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    for (int rep = 0; rep < 50; rep++) {  // repeated runs reuse the sleeping/spinning workers
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.run([&](int ith, int nth) {
        EXPECT_EQ(nth, n);
        hits[size_t(ith)]++;
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, BarrierSeparatesPhases) {
  ThreadPool pool(3);
  constexpr int kPhases = 200;
  std::vector<int> slots(3 * kPhases, 0);
  std::atomic<bool> ok{true};
  pool.run([&](int ith, int nth) {
    for (int p = 0; p < kPhases; p++) {
      slots[size_t(p * nth + ith)] = p + 1;  // everyone writes phase p ...
      pool.barrier();
      for (int j = 0; j < nth; j++)          // ... and sees everyone's write after the barrier
        if (slots[size_t(p * nth + j)] != p + 1) ok = false;
      pool.barrier();
    }
  });
  EXPECT_TRUE(ok);
}

TEST(ThreadPool, WakesAfterSleeping) {
  ThreadPool pool(2);
  std::atomic<int> sum{0};
  pool.run([&](int ith, int) { sum += ith + 1; });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // workers are asleep by now
  pool.run([&](int ith, int) { sum += ith + 1; });
  EXPECT_EQ(sum.load(), 6);
}

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_ANY_THROW(ThreadPool(0)); }

TEST(ThreadPool, CpuMasksAndPinning) {
  EXPECT_EQ(cpus_of_mask(0b1011), (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(cpus_of_mask(0).empty());
  EXPECT_ANY_THROW(ThreadPool(2, {100000}));  // checked before any thread is pinned or started
}

// Many short waits: some sleep on the futex, and every one must be woken.
TEST(ThreadPool, WaitWordWakesSleepers) {
  WaitWord word;
  std::vector<std::thread> waiters;
  for (uint32_t target = 1; target <= 3; target++)
    waiters.emplace_back([&word, target] { word.wait_reach(target, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // waiters are asleep by now
  for (int i = 0; i < 3; i++) word.add(1);
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(word.load(), 3u);
}

}  // namespace
}  // namespace hart::cpu
