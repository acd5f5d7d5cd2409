// ET device kernels launched on the emulator with arbitrary parameter blocks: tensor descriptors
// with any type, shape, strides and address (near the live allocations or anywhere), any scalar
// fields, truncated blocks, and uberkernel op lists. Each launch must be rejected on the host
// (hart::Error), fail on the device (an error on its stream), or complete; a crash, hang or
// sanitizer report in the emulator or a kernel is a bug.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/et/device/et_params.h"
#include "backend/et/emu/emulator.h"
#include "backend/et/emu/launch_params.h"
#include "common/error.h"

using namespace hart;
using namespace hart::et;

namespace {

constexpr size_t kBuffers = 4;
constexpr int64_t kBufferBytes = 8 << 10;

// One emulated device for the whole run, with buffers reset before every launch: floats in
// [-2, 2) in the first three, small row indices (0..7 as I32 / I64) in the last.
struct Rig {
  std::unique_ptr<emu::EmuDevice> dev;
  Stream stream = 0;
  DeviceAddr buf[kBuffers] = {};
  std::vector<uint8_t> contents[kBuffers];

  Rig() {
    char dir[] = "/tmp/hart_fuzz_et_XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    emu::EmuConfig config;
    config.lock_dir = dir;
    config.shires = 2;
    config.memory_bytes = 16 << 20;
    config.host_threads = 1;
    dev = emu::open_emulator(config);
    stream = dev->create_stream();
    for (size_t b = 0; b < kBuffers; b++) {
      buf[b] = dev->malloc(kBufferBytes);
      contents[b].resize(kBufferBytes);
      for (int64_t i = 0; i < kBufferBytes / 4; i++) {
        const uint32_t v = uint32_t(i * 2654435761u);
        const float f = float(v % 4096) / 1024.0f - 2.0f;
        if (b + 1 < kBuffers) std::memcpy(&contents[b][i * 4], &f, 4);
        else {
          const uint32_t index = i % 2 ? 0 : v % 8;  // I32 0..7 and 0, or I64 0..7
          std::memcpy(&contents[b][i * 4], &index, 4);
        }
      }
    }
  }
  void reset() {
    for (size_t b = 0; b < kBuffers; b++) dev->memcpy_h2d(buf[b], contents[b].data(), kBufferBytes);
  }
};

int64_t element_bytes(int32_t type) {
  switch (type) {
    case ET_TYPE_F32: case ET_TYPE_I32: return 4;
    case ET_TYPE_F16: return 2;
    case ET_TYPE_I64: return 8;
    case ET_TYPE_Q8_0: return 34;  // per 32-element block, as ggml's nb[0]
    case ET_TYPE_Q4_0: return 18;
    default: return 4;
  }
}

// Mostly plausible descriptors (small shapes, contiguous strides, inside a buffer) so kernels get
// past their checks, with bits of `mode` letting the fuzzer make any field hostile.
et_tensor make_tensor(FuzzedDataProvider& in, const Rig& rig) {
  static const int32_t kTypes[] = {ET_TYPE_F32, ET_TYPE_F16, ET_TYPE_Q4_0, ET_TYPE_Q8_0, ET_TYPE_I32, ET_TYPE_I64};
  const uint8_t mode = in.ConsumeIntegral<uint8_t>();
  et_tensor t{};
  t.type = mode & 0x80 ? in.ConsumeIntegral<int32_t>() : in.PickValueInArray(kTypes);
  for (int d = 0; d < 4; d++) {
    t.ne[d] = mode & 0x40 ? in.ConsumeIntegral<int64_t>() : in.ConsumeIntegralInRange<int64_t>(d == 0 ? 0 : 1, d == 0 ? 96 : 3);
  }
  const bool blocks = t.type == ET_TYPE_Q4_0 || t.type == ET_TYPE_Q8_0;
  t.nb[0] = element_bytes(t.type);
  // Contiguous strides, wrapping (as the device's 64-bit registers would) for hostile shapes.
  const auto wrap_mul = [](int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); };
  t.nb[1] = wrap_mul(blocks ? t.ne[0] / 32 : t.ne[0], t.nb[0]);
  for (int d = 2; d < 4; d++) t.nb[d] = wrap_mul(t.nb[d - 1], t.ne[d - 1]);
  if (mode & 0x20) {
    for (int d = 0; d < 4; d++) t.nb[d] = in.ConsumeIntegralInRange<int64_t>(-256, 4096);
  }
  if (mode & 0x10) {
    t.addr = in.ConsumeIntegral<uint64_t>();
  } else {
    t.addr = rig.buf[in.ConsumeIntegralInRange<size_t>(0, kBuffers - 1)] +
             uint64_t(in.ConsumeIntegralInRange<int64_t>(-64, kBufferBytes));
  }
  return t;
}

// A kernel's block: its leading et_tensor fields, then its scalars as raw bytes (small floats
// and flags are reachable from any bytes).
void append_block(std::vector<uint8_t>& out, uint32_t kernel_id, FuzzedDataProvider& in, const Rig& rig) {
  const size_t bytes = emu::launch_params_bytes(kernel_id);
  const size_t start = out.size();
  out.resize(start + bytes);
  size_t at = start;
  if (kernel_id != ET_KERNEL_ID_uberkernel) {
    for (; at + sizeof(et_tensor) <= start + bytes; at += sizeof(et_tensor)) {
      const et_tensor t = make_tensor(in, rig);
      std::memcpy(&out[at], &t, sizeof t);
    }
  }
  const std::vector<uint8_t> rest = in.ConsumeBytes<uint8_t>(start + bytes - at);
  if (!rest.empty()) std::memcpy(&out[at], rest.data(), rest.size());
}

// An uberkernel block: header, op list, then the sub-kernels' blocks at 8-byte aligned offsets;
// the fuzzer may overwrite the count or an op to point anywhere.
std::vector<uint8_t> uber_block(FuzzedDataProvider& in, const Rig& rig) {
  const uint32_t count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  std::vector<uint8_t> out(sizeof(et_uber_params) + count * sizeof(et_uber_op));
  const et_uber_params header{count, 0};
  std::memcpy(out.data(), &header, sizeof header);
  for (uint32_t i = 0; i < count; i++) {
    const auto kernel = uint16_t(in.ConsumeIntegralInRange<uint32_t>(0, ET_KERNEL_COUNT - 2));
    const auto flags = uint16_t(in.ConsumeIntegralInRange<uint32_t>(0, ET_UBER_WAIT));
    et_uber_op op{kernel, flags, uint32_t(out.size())};
    append_block(out, op.kernel_id, in, rig);
    out.resize((out.size() + 7) / 8 * 8);
    std::memcpy(&out[sizeof header + i * sizeof op], &op, sizeof op);
  }
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0 && out.size() >= 8) {
    const size_t at = in.ConsumeIntegralInRange<size_t>(0, out.size() / 4 - 1) * 4;
    const uint32_t v = in.ConsumeIntegral<uint32_t>();
    std::memcpy(&out[at], &v, 4);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Rig rig;
  FuzzedDataProvider in(data, size);
  const uint32_t kernel_id = in.ConsumeIntegralInRange<uint32_t>(0, ET_KERNEL_COUNT - 1);
  const uint64_t mask = in.ConsumeIntegralInRange<uint64_t>(1, 3);
  std::vector<uint8_t> block;
  if (kernel_id == ET_KERNEL_ID_uberkernel) {
    block = uber_block(in, rig);
  } else {
    append_block(block, kernel_id, in, rig);
  }
  size_t bytes = block.size();
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) bytes = in.ConsumeIntegralInRange<size_t>(0, bytes);

  rig.reset();
  try {
    rig.dev->launch(rig.stream, Kernel{kernel_id}, block.data(), bytes, mask);
  } catch (const Error&) {
    return 0;  // rejected on the host
  }
  rig.dev->wait(rig.stream);
  rig.dev->take_error(rig.stream);  // a device-side rejection is a fine outcome
  return 0;
}
