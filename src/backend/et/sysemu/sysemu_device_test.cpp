// The et-sysemu device on the vendor's simulator: a kernel's results read back and equal to the
// built-in emulator's (the matrix engine's too), sysemu's counts in the profile, and every way a
// launch ends badly (a bad access, a kernel's own failure, a hang past -max_cycles) an error on the
// launch's stream; a missing simulator is a one-line error naming it. Skips when no sys_emu is
// found (scripts/build-sysemu).
#include "backend/et/sysemu/sysemu_device.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <vector>

#include "backend/et/device/et_params.h"
#include "backend/et/minion/et_minion.h"
#include "backend/et/scale_case.h"
#include "common/error.h"

namespace hart::et::sysemu {
namespace {

namespace fs = std::filesystem;

class SysemuDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      sysemu_path();
      minion_elf_path();
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
    lock_dir_ = fs::temp_directory_path() / ("hart-sysemu-test-" + std::to_string(getpid()));
    fs::create_directories(lock_dir_);
  }
  void TearDown() override { fs::remove_all(lock_dir_); }

  emu::EmuConfig config(uint32_t shires = 2) const {
    emu::EmuConfig c;
    c.shires = shires;
    c.memory_bytes = 64ull << 20;
    c.lock_dir = lock_dir_.string();
    return c;
  }

  static et_scale_params scale(Device& d, const std::vector<float>& x) { return scale_case(d, x, 0.375f, -1.5f); }

  template <class P>
  static std::optional<std::string> launch(Device& d, const char* kernel, const P& p, uint64_t mask = 0x3) {
    const Stream s = d.create_stream();
    d.launch(s, d.load_kernel(kernel), &p, sizeof p, mask);
    d.wait(s);
    auto err = d.take_error(s);
    d.destroy_stream(s);
    return err;
  }

  fs::path lock_dir_;
};

std::vector<float> inputs(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; i++) x[i] = float(i % 97) * 0.25f - 7.0f;
  return x;
}

TEST_F(SysemuDevice, RunsAKernelOnTwoShiresAsTheEmulatorDoes) {
  auto sys = open_sysemu(config());
  emu::EmuConfig ec = config();
  ec.name = "emu-ref";
  ec.memory_base = ET_MINION_HEAP;
  auto emu = emu::open_emulator(ec);
  const std::vector<float> x = inputs(3001);
  std::vector<float> got(x.size()), want(x.size());
  sys->profiler_start();
  const et_scale_params p = scale(*sys, x);
  ASSERT_FALSE(launch(*sys, "scale", p).has_value());
  const std::vector<ProfileRecord> recs = sys->profiler_stop();
  sys->memcpy_d2h(got.data(), p.dst.addr, x.size() * 4);
  const et_scale_params q = scale(*emu, x);
  ASSERT_EQ(q.dst.addr, p.dst.addr);
  ASSERT_FALSE(launch(*emu, "scale", q).has_value());
  emu->memcpy_d2h(want.data(), q.dst.addr, x.size() * 4);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[5], 5 * 0.25f * 0.375f - 7.0f * 0.375f - 1.5f);
  bool launched = false;
  for (const ProfileRecord& r : recs) {
    if (r.kind != ProfileRecord::Kind::Launch) continue;
    launched = true;
    ASSERT_TRUE(r.sysemu_cycles && r.sysemu_insns);
    EXPECT_GT(*r.sysemu_cycles, 100u);
    EXPECT_GT(*r.sysemu_insns, 128u);  // every one of the 128 harts ran
    EXPECT_GT(r.flops, 0u);
  }
  EXPECT_TRUE(launched);
}

// With the memory checker on (the default): an uberkernel's second sub-kernel reads, after the
// launch barrier, what the other shire's harts wrote; without the barrier's L2 eviction sysemu
// reports a Coherency Read Hazard there.
TEST_F(SysemuDevice, AnUberkernelsLaunchBarrierMakesTheOtherShiresWritesVisible) {
  auto sys = open_sysemu(config());
  const UberScales u = uber_scales_case(*sys, inputs(4096));
  const Stream s = sys->create_stream();
  sys->launch(s, sys->load_kernel("uberkernel"), u.blob.data(), u.blob.size() * 8, 0x3);
  sys->wait(s);
  const auto err = sys->take_error(s);
  sys->destroy_stream(s);
  ASSERT_FALSE(err.has_value()) << *err;
  std::vector<float> got(u.want.size());
  sys->memcpy_d2h(got.data(), u.out, got.size() * 4);
  EXPECT_EQ(got, u.want);
}

TEST_F(SysemuDevice, AnAccessOutsideTheAllocationsIsAStreamError) {
  auto sys = open_sysemu(config());
  et_scale_params p = scale(*sys, inputs(1000));
  p.src.addr += 1ull << 20;  // past the memory in use
  const auto err = launch(*sys, "scale", p);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("outside device allocations"), std::string::npos) << *err;
  // The stream's next launch runs again.
  EXPECT_FALSE(launch(*sys, "scale", scale(*sys, inputs(64))).has_value());
}

TEST_F(SysemuDevice, AKernelRejectingItsParametersIsAStreamError) {
  auto sys = open_sysemu(config());
  et_scale_params p = scale(*sys, inputs(1000));
  p.dst.nb[0] = 8;  // not contiguous
  const auto err = launch(*sys, "scale", p);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("failed: "), std::string::npos) << *err;
}

// The matrix engine on the chip (minion/et_tensor_chip.h): one 16 x 16 tile of K 256 on one shire,
// its 16 chunks split over 16 minions that add their partial C by a TensorReduce tree, gives the
// emulator's memory bit for bit, and the launch reports the engine's flops.
TEST_F(SysemuDevice, TheMatrixEngineGivesTheEmulatorsResult) {
  auto sys = open_sysemu(config(1));
  emu::EmuConfig ec = config(1);
  ec.name = "emu-ref";
  ec.memory_base = ET_MINION_HEAP;
  auto emu = emu::open_emulator(ec);
  const int64_t k = 256, m = 16, n = 16;
  const et_mul_mat_params p = engine_tile_case(*sys, k), q = engine_tile_case(*emu, k);
  ASSERT_EQ(p.dst.addr, q.dst.addr);
  sys->profiler_start();
  const auto err = launch(*sys, "mul_mat_f32_matrix_engine", p, 0x1);
  const std::vector<ProfileRecord> recs = sys->profiler_stop();
  ASSERT_FALSE(err.has_value()) << *err;
  ASSERT_FALSE(launch(*emu, "mul_mat_f32_matrix_engine", q, 0x1).has_value());
  std::vector<float> got(size_t(m * n)), want(got.size());
  sys->memcpy_d2h(got.data(), p.dst.addr, got.size() * 4);
  emu->memcpy_d2h(want.data(), q.dst.addr, want.size() * 4);
  EXPECT_EQ(got, want);
  for (const ProfileRecord& r : recs) {
    if (r.kind == ProfileRecord::Kind::Launch) {
      EXPECT_GE(r.flops, uint64_t(2 * k * m * n));
    }
  }
}

TEST_F(SysemuDevice, AHangPastMaxCyclesIsAStreamError) {
  SysemuConfig sc;
  sc.max_cycles = 50;  // the harts have not even passed their start-up
  auto sys = open_sysemu(config(), sc);
  const auto err = launch(*sys, "scale", scale(*sys, inputs(1000)));
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("did not finish within 50 cycles"), std::string::npos) << *err;
}

TEST_F(SysemuDevice, AMissingSimulatorIsAOneLineErrorNamingIt) {
  setenv("HART_ET_SYSEMU", "/nonexistent/sys_emu", 1);
  try {
    open_sysemu(config());
    ADD_FAILURE() << "opened without a simulator";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/sys_emu"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  unsetenv("HART_ET_SYSEMU");
}

}  // namespace
}  // namespace hart::et::sysemu
