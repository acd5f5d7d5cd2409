// et::Device: the one interface the ET backend uses to talk to an accelerator in the style of
// ET-SoC-1 (shires of minions of harts, separate device memory, kernels launched on a shire mask).
// The emulator (emu/emulator.h) implements it; a driver for real hardware would be a second
// implementation. Device memory is addressed by DeviceAddr, never by host pointers.
//
// Streams run their commands in order. A command that fails on the device (a kernel fault such as
// an out-of-bounds access, or a kernel rejecting its parameters) leaves an error on its stream:
// later commands of that stream are skipped until take_error() collects it. Bad host-side
// arguments (unknown kernel, a copy outside any allocation) throw hart::Error at the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hart::et {

using DeviceAddr = uint64_t;
using Stream = uint32_t;  // 0 is the default stream, used by the blocking copies
using Event = uint64_t;

struct Properties {
  std::string name;  // "et0"
  uint32_t shires = 0;
  uint32_t minions_per_shire = 0;
  uint32_t harts_per_minion = 0;
  uint64_t memory_bytes = 0;
  double clock_hz = 0;
  uint32_t cache_line_bytes = 0;
  uint64_t all_shires_mask() const { return shires >= 64 ? ~0ull : (1ull << shires) - 1; }
};

struct Kernel {
  uint32_t id = 0;
};

// One profiled command. Host times are seconds since profiler_start(); device times come from
// the cost model, on a device timeline where commands run one after another.
struct ProfileRecord {
  enum class Kind { Launch, CopyH2D, CopyD2H, Wait };
  Kind kind = Kind::Launch;
  std::string name;  // kernel name for launches
  Stream stream = 0;
  uint64_t shire_mask = 0;
  uint64_t bytes = 0;  // copies
  uint64_t flops = 0, bytes_read = 0, bytes_written = 0;  // launches, as the kernel reported
  double host_start_s = 0, host_end_s = 0;
  double device_start_s = 0, device_s = 0;
  bool failed = false;
  // Launches on the vendor's simulator (et-sysemu): its own count of cycles and retired
  // instructions, beside the modelled device_s.
  std::optional<uint64_t> sysemu_cycles, sysemu_insns;
  // Launches whose harts met at launch barriers (uberkernels): one entry per phase between them.
  struct Phase {
    double host_end_s = 0;  // when the phase's last hart arrived (seconds since profiler_start)
    double device_s = 0;    // modelled, including the barrier
  };
  std::vector<Phase> phases;
  // Uberkernels: each sub-kernel's own modelled work, flops and bytes, in order (CostModel::sub_kernels);
  // the sub-kernels of one phase share its device_s.
  struct SubKernel {
    double work_s = 0;
    uint64_t flops = 0;
    uint64_t bytes = 0;  // read and written
  };
  std::vector<SubKernel> sub_kernels;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const Properties& properties() const = 0;

  // Device memory, 64-byte aligned at least. Throws hart::Error when the memory is exhausted.
  virtual DeviceAddr malloc(uint64_t bytes, uint64_t align = 64) = 0;
  virtual void free(DeviceAddr addr) = 0;

  virtual Stream create_stream() = 0;
  virtual void destroy_stream(Stream s) = 0;  // waits for its commands first

  // Blocking copies (on the default stream; a device-side failure throws hart::Error).
  virtual void memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) = 0;
  virtual void memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) = 0;
  // Asynchronous copies: the host buffer must stay valid until the stream reaches the copy.
  virtual void memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) = 0;
  virtual void memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) = 0;

  // An event completes when every command enqueued on s before it has completed (or was skipped).
  virtual Event record_event(Stream s) = 0;
  virtual bool event_done(Event e) = 0;
  virtual void wait_event(Event e) = 0;

  virtual Kernel load_kernel(std::string_view name) = 0;
  // params is copied at the call; each set bit of shire_mask runs one shire of harts.
  virtual void launch(Stream s, Kernel k, const void* params, size_t params_bytes, uint64_t shire_mask) = 0;
  virtual void wait(Stream s) = 0;
  // The first device-side error of stream s since the last call, which clears it.
  virtual std::optional<std::string> take_error(Stream s) = 0;

  virtual void profiler_start() = 0;
  virtual std::vector<ProfileRecord> profiler_stop() = 0;
};

}  // namespace hart::et
