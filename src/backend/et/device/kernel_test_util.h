// Shared by the device kernel tests: one emulated device per test binary, tensors uploaded from
// host vectors and described as et_tensor, launches that must succeed, and random data.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

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

 private:
  Dev();
  ~Dev();
  std::string lock_dir_;
  void launch_and_check(const char* name, const void* params, size_t bytes, uint64_t mask);
  std::string launch_for_error(const char* name, const void* params, size_t bytes);
  std::unique_ptr<emu::EmuDevice> device_;
  Stream stream_ = 0;
};

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<uint16_t> to_f16(const std::vector<float>& v);
std::vector<float> from_f16(const std::vector<uint16_t>& v);
// Rows of k elements quantized to block type t (Q8_0, Q4_0, Q4_K) as raw blocks.
std::vector<uint8_t> quantize(Type t, const std::vector<float>& v, int64_t k);

// |got - want| <= tol * max(1, |want|) for every element.
void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol);

}  // namespace hart::et::test
