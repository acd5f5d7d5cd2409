// Shared by the device kernel tests: one emulated device per test binary, tensors uploaded from
// host vectors (or graph tensors) and described as et_tensor, launches that must succeed, random
// data, and the CPU backend's reference result of a graph node to compare with.
// With HART_ET_TEST_DEVICE=et-sysemu (ctest's et_kernels_sysemu_test) every launch also runs on
// the et-sysemu device, which mirrors every allocation and copy: after each launch the two
// devices' memories must be equal bit for bit (the matrix engine's kernels included: the minion
// program issues the tensor instructions, minion/et_tensor_chip.h).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/op_test_util.h"
#include "backend/et/device/et_params.h"
#include "backend/et/emu/emulator.h"
#include "types/tensor_type.h"

namespace hart::et::test {

constexpr uint64_t kSmallMask = 0x5;          // shires 0 and 2: 128 harts
constexpr uint64_t kFullMask = 0xffffffffull;  // all 32 shires: 2048 harts

using Shape = std::array<int64_t, 4>;

class Dev {
 public:
  static Dev& get();
  Device& device() { return *device_; }

  // Uploads bytes into a fresh allocation (freed with the Dev) and returns its address.
  DeviceAddr upload(const void* data, size_t bytes);
  DeviceAddr alloc(size_t bytes);
  // A contiguous tensor of the given type and shape at addr.
  static et_tensor describe(DeviceAddr addr, Type type, Shape ne);
  template <class T>
  et_tensor tensor(const std::vector<T>& host, Type type, Shape ne) {
    return describe(upload(host.data(), host.size() * sizeof(T)), type, ne);
  }
  et_tensor output(Type type, Shape ne);

  // Launches kernel `name` with params on mask and requires it to finish without error.
  template <class P>
  void run(const char* name, const P& params, uint64_t mask = kSmallMask) {
    launch_and_check(name, &params, sizeof params, mask);
  }
  // Launches kernel `name` with params, which must fail; returns the stream's error.
  template <class P>
  std::string launch_error(const char* name, const P& params) {
    return launch_for_error(name, &params, sizeof params);
  }
  std::vector<float> download_f32(const et_tensor& t);
  std::vector<uint16_t> download_f16(const et_tensor& t);
  std::vector<int32_t> download_i32(const et_tensor& t);

 private:
  Dev();
  ~Dev();
  std::string lock_dir_;
  void launch_and_check(const char* name, const void* params, size_t bytes, uint64_t mask);
  std::string launch_for_error(const char* name, const void* params, size_t bytes);
  void free_test_allocations();
  void compare_mirror(const char* name);
  std::unique_ptr<emu::EmuDevice> device_;
  std::unique_ptr<emu::EmuDevice> mirror_;  // et-sysemu, in conformance mode
  Stream stream_ = 0, mirror_stream_ = 0;
  std::vector<std::pair<DeviceAddr, size_t>> allocs_;  // the running test's, freed when it ends
  friend class FreeAtTestEnd;
};

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<uint16_t> to_f16(const std::vector<float>& v);
std::vector<float> from_f16(const std::vector<uint16_t>& v);
// Rows of k elements quantized to block type t (any of device/et_blocks.h) as raw blocks.
std::vector<uint8_t> quantize(Type t, const std::vector<float>& v, int64_t k);

// A recurrent op's initial states: n_s random states of `row` floats, or (cells > 0) a store of
// that many and the I32 cells the n_s sequences read, the last the same as the first (two
// sequences from one snapshot). Returns {state, cells or nullptr}.
std::pair<Tensor*, Tensor*> initial_states(cpu::test::Bench& b, int64_t row, int64_t n_s, int64_t cells);

// The memory graph tensor t views (its owner's bytes) uploaded, and t described over it with its
// own strides.
et_tensor upload(const Tensor& t);
// A fresh, poisoned device output of node's type and shape.
et_tensor output_like(const Tensor& node);
// An F32 or I32 device tensor's values as floats.
std::vector<float> device_values(const et_tensor& t);
// Computes node on the CPU backend with the reference kernel set; its values in row-major order.
std::vector<float> cpu_result(cpu::test::Bench& b, Tensor* node);
// A view of the first ne0 columns of a wider F32 tensor's rows (rows not contiguous with each other).
Tensor* narrow(cpu::test::Bench& b, std::initializer_list<int64_t> wide, int64_t ne0);

// got == want (infinities) or |got - want| <= tol * max(1, |want|) for every element.
void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol);

// Gives params a fresh dst shaped as node, runs kernel `name` on mask and expects dst (F32, or
// I32 indices) within tol of node computed by the CPU's reference kernels (expect_near_all).
template <class P>
void expect_cpu_result(const char* name, P& params, Tensor* node, cpu::test::Bench& b, uint64_t mask, float tol) {
  params.dst = output_like(*node);
  Dev::get().run(name, params, mask);
  expect_near_all(device_values(params.dst), cpu_result(b, node), tol);
}

// The same for a recurrent-state kernel, whose parameter block P is node's sources in order up
// to the state, then the optional cells, dst and has_cells: each source uploaded.
template <class P>
void expect_sources_cpu_result(const char* name, Tensor* node, cpu::test::Bench& b, uint64_t mask, float tol) {
  constexpr size_t n_src = offsetof(P, cells) / sizeof(et_tensor);
  static_assert(offsetof(P, cells) == n_src * sizeof(et_tensor) && offsetof(P, dst) == offsetof(P, cells) + sizeof(et_tensor),
                "P must be the sources, cells and dst");
  static_assert(n_src < size_t(kMaxSrc));
  P params{};
  et_tensor* t = reinterpret_cast<et_tensor*>(&params);
  for (size_t i = 0; i < n_src; i++) t[i] = upload(*node->src[i]);
  if ((params.has_cells = node->src[n_src] != nullptr)) params.cells = upload(*node->src[n_src]);
  expect_cpu_result(name, params, node, b, mask, tol);
}

// UNARY kind of x computed by the device's unary kernel as activation act (an et_activation),
// against the CPU's reference kernels (expect_cpu_result).
void expect_unary(Unary kind, int32_t act, Tensor* x, cpu::test::Bench& b, uint64_t mask, float tol);

// Launches kernel `name` with params, which must fail with an error containing message.
template <class P>
void expect_rejected(const char* name, const P& params, const std::string& message) {
  const std::string err = Dev::get().launch_error(name, params);
  EXPECT_NE(err.find(message), std::string::npos) << err;
}

}  // namespace hart::et::test
