// The et-rt device through the vendor's runtime on its simulator (ctest sets ET_TOOLCHAIN to the
// et-platform prefix and HART_ET_RT_LAYER=sysemu): a kernel's results equal to the built-in
// emulator's on two shires (the matrix engine's too), an uberkernel whose sub-kernels meet at a
// launch barrier, the kernels' counters and the firmware's cycle count in the profile, a kernel's rejection and a bad access as stream errors (the
// stream runs again after take_error); missing firmware and a missing card are one-line errors
// naming the file. One runtime for the whole suite: each start boots the firmware (~3 s).
#include "backend/et/rt/rt_device.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "backend/et/device/et_params.h"
#include "backend/et/emu/emulator.h"
#include "backend/et/scale_case.h"
#include "common/error.h"

namespace hart::et::etrt {
namespace {

namespace fs = std::filesystem;

std::vector<float> inputs(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; i++) x[i] = float(i % 97) * 0.25f - 7.0f;
  return x;
}

std::optional<std::string> launch(Device& d, const char* kernel, const void* p, size_t bytes, uint64_t mask) {
  const Stream s = d.create_stream();
  d.launch(s, d.load_kernel(kernel), p, bytes, mask);
  d.wait(s);
  auto err = d.take_error(s);
  d.destroy_stream(s);
  return err;
}

std::vector<float> read(Device& d, DeviceAddr a, size_t n) {
  std::vector<float> v(n);
  d.memcpy_d2h(v.data(), a, n * 4);
  return v;
}

// The built-in emulator on `shires` shires, for the results to compare with.
struct Reference {
  explicit Reference(uint32_t shires) {
    emu::EmuConfig ec;
    ec.shires = shires;
    ec.memory_bytes = 64ull << 20;
    ec.lock_dir = lock_dir;
    fs::create_directories(lock_dir);
    emu = emu::open_emulator(ec);
  }
  ~Reference() {
    emu.reset();
    fs::remove_all(lock_dir);
  }
  std::string lock_dir = (fs::temp_directory_path() / ("hart-rt-test-" + std::to_string(getpid()))).string();
  std::unique_ptr<emu::EmuDevice> emu;
};

class RtDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      RtConfig c = RtConfig::from_env();
      if (c.layer != RtConfig::Layer::Sysemu) return;
      sysemu_files(c.platform);
      device_ = open_rt(c).release();
    } catch (const Error& e) {
      skip_ = e.what();
    }
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }
  void SetUp() override {
    if (!device_) GTEST_SKIP() << (skip_.empty() ? "HART_ET_RT_LAYER is not sysemu" : skip_);
  }

  static Device* device_;
  static std::string skip_;
};

Device* RtDevice::device_ = nullptr;
std::string RtDevice::skip_;

TEST_F(RtDevice, RunsAKernelOnTwoShiresAsTheEmulatorDoes) {
  Device& d = *device_;
  EXPECT_EQ(d.properties().shires, 32u);
  const std::vector<float> x = inputs(3001);
  d.profiler_start();
  const et_scale_params p = scale_case(d, x, 0.375f, -1.5f);
  ASSERT_FALSE(launch(d, "scale", &p, sizeof p, 0x3).has_value());
  const std::vector<ProfileRecord> recs = d.profiler_stop();
  const std::vector<float> got = read(d, p.dst.addr, x.size());

  {
    Reference ref(2);
    const et_scale_params q = scale_case(*ref.emu, x, 0.375f, -1.5f);
    ASSERT_FALSE(launch(*ref.emu, "scale", &q, sizeof q, 0x3).has_value());
    EXPECT_EQ(got, read(*ref.emu, q.dst.addr, x.size()));
  }
  EXPECT_EQ(got[5], 5 * 0.25f * 0.375f - 7.0f * 0.375f - 1.5f);
  size_t launches = 0;
  for (const ProfileRecord& r : recs) {
    if (r.kind != ProfileRecord::Kind::Launch) continue;
    launches++;
    EXPECT_EQ(r.name, "scale");
    EXPECT_EQ(r.shire_mask, 0x3u);
    EXPECT_GT(r.flops, 0u);  // the harts' counters came back
    EXPECT_GT(r.device_s, 0.0);
    ASSERT_TRUE(r.sysemu_cycles.has_value());  // the firmware's count of the launch, in sysemu's cycles
    EXPECT_GT(*r.sysemu_cycles, 100u);
  }
  EXPECT_EQ(launches, 1u);
}

// The tensor instructions from U-mode (minion/et_tensor_chip.h) under the firmware: a tile whose
// 16 minions add their partial C by TensorReduce gives the emulator's result bit for bit.
TEST_F(RtDevice, TheMatrixEngineGivesTheEmulatorsResult) {
  Device& d = *device_;
  const et_mul_mat_params p = engine_tile_case(d, 256);
  ASSERT_FALSE(launch(d, "mul_mat_f32_matrix_engine", &p, sizeof p, 0x1).has_value());
  const std::vector<float> got = read(d, p.dst.addr, 256);
  Reference ref(1);
  const et_mul_mat_params q = engine_tile_case(*ref.emu, 256);
  ASSERT_FALSE(launch(*ref.emu, "mul_mat_f32_matrix_engine", &q, sizeof q, 0x1).has_value());
  EXPECT_EQ(got, read(*ref.emu, q.dst.addr, 256));
}

// The launch barrier between an uberkernel's sub-kernels (L1 and L2 evictions, shires meeting
// at the sync line) makes the first's results visible to the second (scale_case.h).
TEST_F(RtDevice, AnUberkernelsLaunchBarrierOrdersItsSubKernels) {
  Device& d = *device_;
  const UberScales u = uber_scales_case(d, inputs(4096));
  ASSERT_FALSE(launch(d, "uberkernel", u.blob.data(), u.blob.size() * 8, 0x3).has_value());
  EXPECT_EQ(read(d, u.out, u.want.size()), u.want);
}

TEST_F(RtDevice, AKernelRejectingItsParametersIsAStreamErrorAndTheStreamRunsOn) {
  Device& d = *device_;
  et_scale_params p = scale_case(d, inputs(1000), 1.0f, 0.0f);
  p.dst.nb[0] = 8;  // not contiguous
  const Stream s = d.create_stream();
  d.launch(s, d.load_kernel("scale"), &p, sizeof p, 0x3);
  p.dst.nb[0] = 4;
  std::vector<float> after(1000, -1.0f);
  d.launch(s, d.load_kernel("scale"), &p, sizeof p, 0x3);  // skipped: the stream has an error
  d.memcpy_d2h_async(s, after.data(), p.dst.addr, 1000 * 4);
  d.wait(s);
  const auto err = d.take_error(s);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("failed: "), std::string::npos) << *err;
  EXPECT_EQ(after[0], -1.0f);
  d.launch(s, d.load_kernel("scale"), &p, sizeof p, 0x1);
  d.wait(s);
  EXPECT_FALSE(d.take_error(s).has_value());
  d.destroy_stream(s);
  EXPECT_EQ(read(d, p.dst.addr, 1)[0], -7.0f);
}

TEST_F(RtDevice, AnAccessOutsideTheAllocationsIsAStreamError) {
  Device& d = *device_;
  et_scale_params p = scale_case(d, inputs(1000), 1.0f, 0.0f);
  p.src.addr += 1ull << 30;  // past every allocation
  const auto err = launch(d, "scale", &p, sizeof p, 0x3);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("outside device allocations"), std::string::npos) << *err;
  const et_scale_params q = scale_case(d, inputs(64), 1.0f, 0.0f);
  EXPECT_FALSE(launch(d, "scale", &q, sizeof q, 0x3).has_value());
}

TEST(RtDeviceSetup, MissingOrEmptyFirmwareIsAOneLineErrorNamingTheFile) {
  const fs::path root = fs::temp_directory_path() / ("hart-rt-fw-" + std::to_string(getpid()));
  const fs::path bootrom = root / "lib/esperanto-fw/BootromTrampolineToBL2/BootromTrampolineToBL2.elf";
  fs::create_directories(bootrom.parent_path());
  std::ofstream(bootrom).flush();  // empty
  for (const char* expect : {"BootromTrampolineToBL2.elf' is missing or empty", "ServiceProcessorBL2_fast-boot.elf"}) {
    try {
      sysemu_files(root.string());
      ADD_FAILURE() << "accepted " << root;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
    std::ofstream(bootrom) << "ELF";  // the next one is missing
  }
  fs::remove_all(root);
}

TEST(RtDeviceSetup, NoCardIsAOneLineErrorNamingTheDeviceFile) {
  if (access("/dev/et0_mgmt", F_OK) == 0 && access("/dev/et0_ops", F_OK) == 0) GTEST_SKIP() << "a card is present";
  RtConfig c;
  c.layer = RtConfig::Layer::Pcie;
  c.kernel_dir = RtConfig::from_env().kernel_dir;
  try {
    open_rt(c);
    ADD_FAILURE() << "opened without a card";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/et0_"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hart::et::etrt
