// The emulated device: memory, streams, events, faults becoming stream errors, barriers on fibers,
// the cross-process lock, the profiler with its cost model, and the minions' matrix engines.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <vector>

#include "backend/et/emu/emulator.h"
#include "backend/et/emu/tensor_unit.h"
#include "common/error.h"
#include "common/fp16.h"

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
  cfg.cost.vector_flops_per_cycle = 16;  // the vector unit's peak: this launch is memory bound
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
  m.vector_flops_per_cycle = 16;
  c[2].flops = 16000;  // minion 1, hart 0
  c[3].flops = 16000;  // minion 1, hart 1: 32000 flops at 16 per cycle = 2000 cycles
  EXPECT_DOUBLE_EQ(m.launch_seconds(c), 2000 / 1e9 + m.launch_overhead_s);
  m.vector_flops_per_cycle = 0.25;  // scalar kernels
  EXPECT_DOUBLE_EQ(m.launch_seconds(c), 128000 / 1e9 + m.launch_overhead_s);
}

TEST(EtCostModel, AMinionIsBusyForTheLongerOfItsVectorWorkAndItsEngine) {
  CostModel m;
  m.vector_flops_per_cycle = 16;
  std::vector<et_counters> c(128);
  c[2].flops = 16000 + 4096;  // minion 1: 1000 vector cycles, and 4096 engine flops ...
  c[2].tensor_flops = 4096;
  c[2].tensor_cycles = 3000;  // ... over 3000 engine cycles
  EXPECT_DOUBLE_EQ(m.launch_seconds(c), 3000 / 1e9 + m.launch_overhead_s);
  c[3].flops = 64000;  // its second hart's vector work: 4000 more cycles
  EXPECT_DOUBLE_EQ(m.launch_seconds(c), 5000 / 1e9 + m.launch_overhead_s);
}

// ---- The matrix engine ---------------------------------------------------------------------

TEST(EtTensorUnit, Fma16A32AddsExactProductsRoundedOnceTowardZero) {
  const uint16_t one = 0x3c00, small = 0x0c00, small_and_half = 0x0e00;  // 1, 2^-12, 1.5 * 2^-12
  // 1 + 1.5 * 2^-24: to nearest it would be 1 + 2^-23, toward zero it is 1.
  EXPECT_EQ(fma16a32_step(small_and_half, small, 0, 0, 1.0f), 1.0f);
  EXPECT_EQ(fma16a32_step(0x8e00, small, 0, 0, -1.0f), -1.0f);  // -1.5 * 2^-24: toward zero, not down
  EXPECT_EQ(fma16a32_step(small_and_half, small, 0, 0, 0.0f), 1.5f * 0x1p-24f);
  // A subnormal fp16 operand (2^-24 here) is a zero, as sysemu's FPU flushes it.
  EXPECT_EQ(fma16a32_step(0x0001, 0x7bff, 0, 0, 0.0f), 0.0f);
  // 2047 * 2047 = 4190209 is no fp16 but is kept exactly.
  const uint16_t h2047 = f32_to_fp16(2047.0f);
  EXPECT_EQ(fma16a32_step(h2047, h2047, one, one, 0.0f), 4190210.0f);
  EXPECT_EQ(fma16a32_step(one, one, one, one, 0.5f), 2.5f);
}

// The chip's adder is narrower than an exact sum (fp16_pair_sum.h): where bits fall below its
// datapath the result is one ulp under the exact sum rounded toward zero. The values are
// sysemu's (f1632_mulAdd3 / f1632_mulAdd2), which et_kernels_sysemu_test holds the emulator to.
TEST(EtTensorUnit, Fma16A32IsTheChipsAdderNotAnExactSum) {
  const auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  const auto from = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  // The exact sum of these, rounded toward zero, is 0xc6f64650 (-31523.156); the chip gives
  // one ulp less in magnitude.
  EXPECT_EQ(bits(fma16a32_step(0x35ed, 0x612b, 0x5568, 0xc1b1, from(0xc6f643feu))), 0xc6f6464fu);
  // A first step (the two products alone): exactly toward zero 0x43bda985; the chip 0x43bda984.
  EXPECT_EQ(bits(fma16a32_first(0x1946, 0x5c3b, 0xd69e, 0xc327)), 0x43bda984u);
}

struct EngineParams {
  uint64_t a, b, out;
  int32_t mode, rows;
};
enum EngineMode { kFma32, kFma16, kReduce, kFromHart1, kMisaligned, kNoSender };

// Minion 0's first hart (and minion 1's for kReduce): A (rows lines) and B (16 lines) from memory,
// one TensorFMA of 16 steps starting C afresh and one of 7 more on the same lines, C stored to out.
void engine_probe(const void* params, const et_env* env) {
  const auto* p = static_cast<const EngineParams*>(params);
  const bool second = p->mode == kFromHart1;
  if (env->thread_id != (second ? 1u : 0u) && !(p->mode == kReduce && env->thread_id == 2)) return;
  const auto* a = static_cast<const uint8_t*>(et_ptr(env, p->a, 64 * 16));
  const auto* b = static_cast<const uint8_t*>(et_ptr(env, p->b, 64 * 16));
  if (p->mode == kNoSender) et_tensor_reduce(env, ET_TENSOR_RECV, 5, p->rows);
  et_tensor_load(env, 0, a + (p->mode == kMisaligned ? 4 : 0), p->rows, 64);
  et_tensor_load(env, 16, b, 16, 64);
  const int op = p->mode == kFma16 ? ET_TENSOR_FMA16A32 : ET_TENSOR_FMA32;
  et_tensor_fma(env, op, 0, 16, p->rows, 16, 1);
  et_tensor_fma(env, op, 0, 16, p->rows, 7, 0);
  if (p->mode == kReduce && env->minion_id == 1) return et_tensor_reduce(env, ET_TENSOR_SEND, 0, p->rows);
  if (p->mode == kReduce) et_tensor_reduce(env, ET_TENSOR_RECV, 1, p->rows);
  et_tensor_store(env, et_ptr(env, p->out, 64 * 16), p->rows, 64);
}

struct EngineRun {
  std::vector<float> c;
  std::optional<std::string> error;
  ProfileRecord rec;
};

EngineRun run_engine(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int mode, int rows) {
  auto dev = open_emulator(small_config(1));
  const Kernel k = dev->add_kernel("engine_probe", &engine_probe);
  const DeviceAddr da = dev->malloc(64 * 17), db = dev->malloc(64 * 16), dout = dev->malloc(64 * 16);
  dev->memcpy_h2d(da, a.data(), a.size());
  dev->memcpy_h2d(db, b.data(), b.size());
  const EngineParams p{da, db, dout, mode, rows};
  dev->profiler_start();
  dev->launch(0, k, &p, sizeof p, 1);
  dev->wait(0);
  EngineRun r;
  r.error = dev->take_error(0);
  r.rec = dev->profiler_stop().at(0);
  r.c.resize(size_t(16 * rows));
  if (!r.error) dev->memcpy_d2h(r.c.data(), dout, r.c.size() * 4);
  return r;
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return {p, p + v.size() * sizeof(T)};
}

std::vector<float> tile_values(uint32_t seed) {
  std::vector<float> v(256);
  for (auto& x : v) x = float(int(seed = seed * 1103515245u + 12345u) >> 8) / float(1 << 23);  // in [-1, 1)
  return v;
}

// C[i][j] = sum over the 16 + 7 steps p of A[i][p] * B[p][j], each step one fused multiply-add
// in order, rows below 16 leaving the rest of C alone.
TEST(EtTensorUnit, Fma32IsAChainOfFusedMultiplyAdds) {
  const auto a = tile_values(1), b = tile_values(2);
  const EngineRun r = run_engine(bytes_of(a), bytes_of(b), kFma32, 5);
  ASSERT_FALSE(r.error) << *r.error;
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 16; j++) {
      float c = a[size_t(i * 16)] * b[size_t(j)];
      for (int p = 1; p < 16; p++) c = std::fma(a[size_t(i * 16 + p)], b[size_t(p * 16 + j)], c);
      for (int p = 0; p < 7; p++) c = std::fma(a[size_t(i * 16 + p)], b[size_t(p * 16 + j)], c);
      EXPECT_EQ(r.c[size_t(i * 16 + j)], c) << i << "," << j;
    }
  }
  // 23 steps of 5 rows: 23 * 5 * 16 multiply-adds over 23 * 5 engine cycles, 21 lines moved.
  EXPECT_EQ(r.rec.flops, uint64_t(2 * 23 * 5 * 16));
  const double cycles = 23 * 5 + 5 + 16 + 5;
  EXPECT_DOUBLE_EQ(r.rec.device_s, cycles / 1e9 + CostModel{}.launch_overhead_s);
}

// A row holds fp16 pairs (A[i][2p], A[i][2p + 1]); B line p the pairs of every column j.
TEST(EtTensorUnit, Fma16A32AccumulatesPairsOfHalfProductsInFp32) {
  std::vector<uint16_t> a(512), b(512);
  const auto av = tile_values(3), bv = tile_values(4);
  for (size_t i = 0; i < 512; i++) {
    a[i] = f32_to_fp16(av[i / 2] * (i % 2 ? 0.5f : 1.0f));
    b[i] = f32_to_fp16(bv[i / 2] * (i % 2 ? -1.0f : 2.0f));
  }
  const EngineRun r = run_engine(bytes_of(a), bytes_of(b), kFma16, 16);
  ASSERT_FALSE(r.error) << *r.error;
  for (int i = 0; i < 16; i++) {
    for (int j = 0; j < 16; j++) {
      auto step = [&](int p, float c) {
        return fma16a32_step(a[size_t(i * 32 + 2 * p)], b[size_t(p * 32 + 2 * j)], a[size_t(i * 32 + 2 * p + 1)],
                             b[size_t(p * 32 + 2 * j + 1)], c);
      };
      float c = fma16a32_first(a[size_t(i * 32)], b[size_t(2 * j)], a[size_t(i * 32 + 1)], b[size_t(2 * j + 1)]);
      for (int p = 1; p < 16; p++) c = step(p, c);
      for (int p = 0; p < 7; p++) c = step(p, c);
      EXPECT_EQ(r.c[size_t(i * 16 + j)], c) << i << "," << j;
    }
  }
  EXPECT_EQ(r.rec.flops, uint64_t(2 * 23 * 2 * 16 * 16));  // 32 fp16 multiply-adds per engine cycle
}

// Minion 1 sends its C to minion 0, whose RECV adds it to its own: twice one minion's product.
TEST(EtTensorUnit, ReduceAddsAnotherMinionsTile) {
  const auto a = tile_values(5), b = tile_values(6);
  const EngineRun one = run_engine(bytes_of(a), bytes_of(b), kFma32, 16);
  const EngineRun two = run_engine(bytes_of(a), bytes_of(b), kReduce, 16);
  ASSERT_FALSE(two.error) << *two.error;
  for (size_t i = 0; i < one.c.size(); i++) EXPECT_EQ(two.c[i], one.c[i] + one.c[i]) << i;
}

TEST(EtTensorUnit, MisuseIsAnErrorNotAHang) {
  const auto a = bytes_of(tile_values(7)), b = bytes_of(tile_values(8));
  const auto from_hart1 = run_engine(a, b, kFromHart1, 4).error;
  ASSERT_TRUE(from_hart1);
  EXPECT_NE(from_hart1->find("issued by a minion's first hart"), std::string::npos) << *from_hart1;
  const auto misaligned = run_engine(a, b, kMisaligned, 4).error;
  ASSERT_TRUE(misaligned);
  EXPECT_NE(misaligned->find("64-byte aligned"), std::string::npos) << *misaligned;
  const auto no_sender = run_engine(a, b, kNoSender, 4).error;
  ASSERT_TRUE(no_sender);
  EXPECT_NE(no_sender->find("deadlock: hart 0 waits for minion 5"), std::string::npos) << *no_sender;
}

TEST(EtDeviceLock, SecondProcessGetsInUseErrorWithOwnerPid) {
  // The child is forked before the parent opens the device, so it is a copy of a process with one
  // thread: a device starts its worker threads, and starting threads in the child of a threaded
  // process is undefined (qemu-user aborts on it). It opens when the parent says it holds the lock.
  int opened[2];
  ASSERT_EQ(pipe(opened), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 = the expected error, 1 = opened anyway, 2 = a different error, 3 = no go.
    close(opened[1]);
    char go = 0;
    if (read(opened[0], &go, 1) != 1) _exit(3);
    try {
      auto second = open_emulator(small_config());
      _exit(1);
    } catch (const Error& e) {
      const std::string expect = "device et0 is in use by process " + std::to_string(getppid());
      _exit(std::string(e.what()) == expect ? 0 : 2);
    }
  }
  close(opened[0]);
  auto dev = open_emulator(small_config());
  ASSERT_EQ(write(opened[1], "g", 1), 1);
  close(opened[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: second open succeeded, 2: wrong message, 3: no word from the parent";
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
