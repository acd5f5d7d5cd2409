// The emulated device: memory, streams, events, faults becoming stream errors, barriers on fibers,
// the cross-process lock, and the profiler with its cost model.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <vector>

#include "backend/et/emu/emulator.h"
#include "common/error.h"

namespace hart::et::emu {
namespace {

// Each test binary locks devices in its own directory, so tests running in parallel never collide.
struct TempDir {
  std::string path = (std::filesystem::temp_directory_path() / "hart-et-test-XXXXXX").string();
  TempDir() {
    if (!mkdtemp(path.data())) std::abort();
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string test_lock_dir() {
  static const TempDir dir;
  return dir.path;
}

EmuConfig small_config(uint32_t shires = 4) {
  EmuConfig c;
  c.lock_dir = test_lock_dir();
  c.shires = shires;
  c.memory_bytes = 64ull << 20;
  c.host_threads = 2;
  return c;
}

struct WriteIdsParams {
  uint64_t out;
};

// Every hart writes its thread id at out[thread_id].
void write_ids(const void* params, const et_env* env) {
  const auto* p = static_cast<const WriteIdsParams*>(params);
  auto* out = static_cast<uint32_t*>(et_ptr(env, p->out + 4ull * env->thread_id, 4));
  *out = env->thread_id;
  et_count(env, 16, 4, 4);
}

// Hart t writes t + 1 into slot t, waits at a barrier of the given scope, then reads its
// neighbour's slot within that scope: correct only if the barrier held everyone back.
struct BarrierParams {
  uint64_t slots, out;
  int32_t scope;
};

void barrier_exchange(const void* params, const et_env* env) {
  const auto* p = static_cast<const BarrierParams*>(params);
  const uint32_t n = env->num_threads;
  auto* slots = static_cast<uint32_t*>(et_ptr(env, p->slots, 4ull * n));
  auto* out = static_cast<uint32_t*>(et_ptr(env, p->out, 4ull * n));
  const uint32_t t = env->thread_id;
  slots[t] = t + 1;
  et_barrier(env, p->scope);
  const uint32_t group = p->scope == ET_BARRIER_MINION ? 2 : p->scope == ET_BARRIER_SHIRE ? 64 : n;
  const uint32_t neighbour = t / group * group + (t + 1) % group;
  out[t] = slots[neighbour];
  et_barrier(env, p->scope);  // a second barrier in the same launch must work too
  slots[t] = 0;
}

void empty_kernel(const void*, const et_env*) {}

void read_out_of_bounds(const void* params, const et_env* env) {
  const auto* p = static_cast<const WriteIdsParams*>(params);
  if (env->thread_id == 5) et_ptr(env, p->out + (1ull << 40), 4);
}

void hart_zero_returns_early(const void*, const et_env* env) {
  if (env->thread_id != 0) et_barrier(env, ET_BARRIER_LAUNCH);
}

void reject_params(const void*, const et_env* env) { et_fail(env, "bad parameters"); }

TEST(EtDevice, PropertiesDescribeEtSoc1) {
  auto dev = open_emulator(small_config(32));
  const Properties& p = dev->properties();
  EXPECT_EQ(p.name, "et0");
  EXPECT_EQ(p.shires, 32u);
  EXPECT_EQ(p.minions_per_shire, 32u);
  EXPECT_EQ(p.harts_per_minion, 2u);
  EXPECT_EQ(p.cache_line_bytes, 64u);
  EXPECT_EQ(p.clock_hz, 1e9);
  EXPECT_EQ(p.all_shires_mask(), 0xffffffffull);
}

TEST(EtDevice, MallocReturnsAlignedDeviceAddressesAndReusesFreedMemory) {
  auto dev = open_emulator(small_config());
  const DeviceAddr a = dev->malloc(100);
  const DeviceAddr b = dev->malloc(1000, 4096);
  EXPECT_EQ(a % 64, 0u);
  EXPECT_EQ(b % 4096, 0u);
  EXPECT_NE(a, 0u);
  EXPECT_GE(b, a + 128);
  dev->free(a);
  EXPECT_EQ(dev->malloc(64), a);  // first fit reuses the hole
  EXPECT_THROW(dev->free(a + 64), Error);
  EXPECT_THROW(dev->malloc(1ull << 40), Error);
}

TEST(EtDevice, BlockingCopiesRoundTripAndRejectBadRanges) {
  auto dev = open_emulator(small_config());
  std::vector<float> in(1000), out(1000, 0.0f);
  std::iota(in.begin(), in.end(), 1.0f);
  const DeviceAddr a = dev->malloc(in.size() * 4);
  dev->memcpy_h2d(a, in.data(), in.size() * 4);
  dev->memcpy_d2h(out.data(), a, out.size() * 4);
  EXPECT_EQ(in, out);
  try {
    dev->memcpy_h2d(a + 64, in.data(), in.size() * 4);
    FAIL() << "copy past the allocation was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not inside one device allocation"), std::string::npos) << e.what();
  }
}

TEST(EtDevice, AsyncCopiesCompleteInStreamOrderAndEventsFollowThem) {
  auto dev = open_emulator(small_config());
  const Stream s = dev->create_stream();
  std::vector<int32_t> a(4096), b(4096), back(4096, -1);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 100000);
  const DeviceAddr d = dev->malloc(a.size() * 4);
  dev->memcpy_h2d_async(s, d, a.data(), a.size() * 4);
  dev->memcpy_h2d_async(s, d, b.data(), b.size() * 4);  // later copy wins: commands run in order
  dev->memcpy_d2h_async(s, back.data(), d, back.size() * 4);
  const Event e = dev->record_event(s);
  dev->wait_event(e);
  EXPECT_TRUE(dev->event_done(e));
  EXPECT_EQ(back, b);
  EXPECT_FALSE(dev->take_error(s).has_value());
  EXPECT_THROW(dev->event_done(e + 100), Error);
  dev->destroy_stream(s);
  EXPECT_THROW(dev->wait(s), Error);
}

TEST(EtDevice, LaunchGivesEveryHartItsIdentity) {
  auto dev = open_emulator(small_config());
  const Kernel k = dev->add_kernel("write_ids", &write_ids);
  const uint64_t mask = 0b1010;  // shires 1 and 3
  const uint32_t n = 2 * 64;
  const DeviceAddr out = dev->malloc(4 * n);
  const WriteIdsParams p{out};
  const Stream s = dev->create_stream();
  dev->launch(s, k, &p, sizeof p, mask);
  dev->wait(s);
  ASSERT_FALSE(dev->take_error(s).has_value());
  std::vector<uint32_t> ids(n);
  dev->memcpy_d2h(ids.data(), out, 4 * n);
  for (uint32_t t = 0; t < n; t++) EXPECT_EQ(ids[t], t);
}

TEST(EtDevice, BarriersOfEveryScopeHoldHartsBack) {
  auto dev = open_emulator(small_config());
  const Kernel k = dev->add_kernel("barrier_exchange", &barrier_exchange);
  const Stream s = dev->create_stream();
  const uint32_t n = 4 * 64;
  const DeviceAddr slots = dev->malloc(4 * n), out = dev->malloc(4 * n);
  for (int scope : {ET_BARRIER_MINION, ET_BARRIER_SHIRE, ET_BARRIER_LAUNCH}) {
    const BarrierParams p{slots, out, scope};
    dev->launch(s, k, &p, sizeof p, 0xf);
    dev->wait(s);
    ASSERT_FALSE(dev->take_error(s).has_value()) << "scope " << scope;
    std::vector<uint32_t> got(n);
    dev->memcpy_d2h(got.data(), out, 4 * n);
    const uint32_t group = scope == ET_BARRIER_MINION ? 2 : scope == ET_BARRIER_SHIRE ? 64 : n;
    for (uint32_t t = 0; t < n; t++) ASSERT_EQ(got[t], t / group * group + (t + 1) % group + 1) << "scope " << scope;
  }
}

TEST(EtDevice, KernelFaultBecomesAStreamErrorAndSkipsLaterCommands) {
  auto dev = open_emulator(small_config());
  const Kernel bad = dev->add_kernel("read_out_of_bounds", &read_out_of_bounds);
  const Kernel ids = dev->add_kernel("write_ids", &write_ids);
  const Stream s = dev->create_stream(), other = dev->create_stream();
  const DeviceAddr out = dev->malloc(4 * 64);
  const WriteIdsParams p{out};
  std::vector<uint32_t> marker(64, 7), back(64, 0);
  dev->memcpy_h2d(out, marker.data(), 4 * 64);
  dev->launch(s, bad, &p, sizeof p, 1);
  dev->launch(s, ids, &p, sizeof p, 1);  // skipped: the stream has an error
  dev->memcpy_d2h_async(other, back.data(), out, 4 * 64);
  dev->wait(s);
  dev->wait(other);
  const auto err = dev->take_error(s);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("kernel read_out_of_bounds: hart 5 accessed 4 bytes"), std::string::npos) << *err;
  EXPECT_NE(err->find("outside device allocations"), std::string::npos) << *err;
  EXPECT_EQ(back, marker) << "the launch after the fault ran";
  EXPECT_FALSE(dev->take_error(other).has_value());
  EXPECT_FALSE(dev->take_error(s).has_value()) << "take_error clears";
  dev->launch(s, ids, &p, sizeof p, 1);  // runs again once the error is collected
  dev->wait(s);
  EXPECT_FALSE(dev->take_error(s).has_value());
  dev->memcpy_d2h(back.data(), out, 4 * 64);
  EXPECT_EQ(back[63], 63u);
}

TEST(EtDevice, KernelFailureAndBarrierDeadlockAreErrorsNotHangs) {
  auto dev = open_emulator(small_config());
  const Stream s = dev->create_stream();
  dev->launch(s, dev->add_kernel("reject", &reject_params), nullptr, 0, 0b11);
  dev->wait(s);
  auto err = dev->take_error(s);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err, "kernel reject: hart 0 failed: bad parameters");
  dev->launch(s, dev->add_kernel("early_return", &hart_zero_returns_early), nullptr, 0, 0b11);
  dev->wait(s);
  err = dev->take_error(s);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("deadlock"), std::string::npos) << *err;
}

TEST(EtDevice, RejectsBadLaunchArguments) {
  auto dev = open_emulator(small_config(4));
  const Kernel k = dev->add_kernel("empty", &empty_kernel);
  EXPECT_THROW(dev->launch(0, k, nullptr, 0, 0), Error);
  EXPECT_THROW(dev->launch(0, k, nullptr, 0, 1ull << 4), Error);
  EXPECT_THROW(dev->launch(0, Kernel{999}, nullptr, 0, 1), Error);
  EXPECT_THROW(dev->launch(42, k, nullptr, 0, 1), Error);
  EXPECT_THROW(dev->load_kernel("no_such_kernel"), Error);
  EXPECT_THROW(dev->add_kernel("empty", &empty_kernel), Error);
  EXPECT_EQ(dev->load_kernel("mul_mat").id, dev->load_kernel("mul_mat").id);
}

TEST(EtDevice, FullDeviceLaunchOf2048Harts) {
  auto dev = open_emulator(small_config(32));
  const Kernel empty = dev->add_kernel("empty", &empty_kernel);
  const Stream s = dev->create_stream();
  for (int i = 0; i < 20; i++) dev->launch(s, empty, nullptr, 0, dev->properties().all_shires_mask());
  dev->wait(s);
  EXPECT_FALSE(dev->take_error(s).has_value());
}

TEST(EtDevice, ProfilerRecordsCommandsWithModelledTimes) {
  EmuConfig cfg = small_config();
  auto dev = open_emulator(cfg);
  const Kernel k = dev->add_kernel("write_ids", &write_ids);
  const DeviceAddr out = dev->malloc(4 * 256);
  const WriteIdsParams p{out};
  std::vector<uint32_t> host(256);
  const Stream s = dev->create_stream();
  dev->profiler_start();
  dev->memcpy_h2d_async(s, out, host.data(), 1024);
  dev->launch(s, k, &p, sizeof p, 0xf);
  dev->wait(s);
  const auto recs = dev->profiler_stop();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].kind, ProfileRecord::Kind::CopyH2D);
  EXPECT_EQ(recs[0].bytes, 1024u);
  EXPECT_DOUBLE_EQ(recs[0].device_s, 1024 / cfg.cost.host_link_bytes_per_s);
  EXPECT_EQ(recs[1].kind, ProfileRecord::Kind::Launch);
  EXPECT_EQ(recs[1].name, "write_ids");
  EXPECT_EQ(recs[1].flops, 256u * 16);
  EXPECT_EQ(recs[1].bytes_read + recs[1].bytes_written, 256u * 8);
  // Memory bound here: 2 KiB over the DRAM bandwidth exceeds 32 flops per minion of compute.
  EXPECT_DOUBLE_EQ(recs[1].device_s, 2048 / cfg.cost.dram_bytes_per_s + cfg.cost.launch_overhead_s);
  EXPECT_DOUBLE_EQ(recs[1].device_start_s, recs[0].device_s);
  EXPECT_EQ(recs[2].kind, ProfileRecord::Kind::Wait);
  EXPECT_LE(recs[1].host_start_s, recs[2].host_end_s);
}

TEST(EtCostModel, ComputeBoundLaunchIsSetByTheBusiestMinion) {
  CostModel m;
  std::vector<et_counters> c(128);
  c[2].flops = 16000;  // minion 1, hart 0
  c[3].flops = 16000;  // minion 1, hart 1: 32000 flops at 16 per cycle = 2000 cycles
  EXPECT_DOUBLE_EQ(m.launch_seconds(c), 2000 / 1e9 + m.launch_overhead_s);
}

TEST(EtDeviceLock, SecondProcessGetsInUseErrorWithOwnerPid) {
  auto dev = open_emulator(small_config());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 = the expected error, 1 = opened anyway, 2 = a different error.
    try {
      auto second = open_emulator(small_config());
      _exit(1);
    } catch (const Error& e) {
      const std::string expect = "device et0 is in use by process " + std::to_string(getppid());
      _exit(std::string(e.what()) == expect ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: second open succeeded, 2: wrong message";
}

TEST(EtDeviceLock, ReleasedWhenTheDeviceCloses) {
  { auto dev = open_emulator(small_config()); }
  auto again = open_emulator(small_config());
  try {
    auto second = open_emulator(small_config());
    FAIL() << "second open in the same process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "device et0 is in use by process " + std::to_string(getpid()));
  }
}

}  // namespace
}  // namespace hart::et::emu
