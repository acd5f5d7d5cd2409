// The ET backend: computes graph parts on an et::Device (the emulator here). For each part it
// lays out device memory (et_memory.h), copies in what the part reads from host memory, launches
// one kernel per op (or, in uberkernel mode, one launch for the whole part: the device dispatches
// the sub-kernels by id, with a barrier only where one depends on another: et_schedule.h), and
// copies back the results read outside.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/et/device.h"
#include "backend/et/et_memory.h"
#include "backend/et/et_ops.h"
#include "backend/et/et_trace.h"
#include "backend/perf_log.h"

namespace hart::et {

struct EtOptions {
  bool uberkernel = false;             // from_env: on unless HART_ET_UBERKERNEL=0 (or GGML_ET_UBERKERNEL=0)
  bool matrix_engine = true;           // the engine kernels where their shapes fit; from_env: unless HART_ET_MATRIX_ENGINE=0
  PerfLog* perf_log = nullptr;         // one ET_PERF line per kernel launch
  std::string profile_dir;             // HART_ET_PROFILE (or GGML_ET_PROFILE): trace files written at destruction
  uint64_t memory_budget = 0;          // resident weights + state; 0: 3/4 of the device memory
  uint64_t shire_mask = 0;             // HART_ET_SHIRE_MASK (hex); 0: every shire

  // Fills uberkernel, matrix_engine, profile_dir and shire_mask from the environment; a HART_ name wins over
  // the seed's GGML_ name when both are set.
  static EtOptions from_env();
};

// An opened device and the mutex its backends hold through each graph part: the backends of one
// process (a target model and its draft model on the same --device) share it, since a second
// open of a device fails on its lock, and its profiler and error state are the device's.
struct SharedDevice {
  explicit SharedDevice(std::unique_ptr<Device> d) : device(std::move(d)) {}
  std::unique_ptr<Device> device;
  std::mutex mutex;
};

// The process's open device `key`, or (none open) open()'s, kept while a backend holds it.
std::shared_ptr<SharedDevice> shared_device(const std::string& key, const std::function<std::unique_ptr<Device>()>& open);

class EtBackend final : public Backend {
 public:
  EtBackend(std::shared_ptr<SharedDevice> device, EtOptions options);
  EtBackend(std::unique_ptr<Device> device, EtOptions options)
      : EtBackend(std::make_shared<SharedDevice>(std::move(device)), std::move(options)) {}
  ~EtBackend() override;

  const std::string& name() const override { return name_; }
  bool supports_op(const Tensor& node) const override { return supports(node); }
  // The whole graph on the device; its kFlagOutput nodes come back to host memory.
  void compute(const Graph& g) override;
  void compute_part(const Graph& g, std::span<Tensor* const> host_reads) override;
  // An uberkernel runs independent calls in one phase (et_schedule.h), and fuses a node into the
  // one before only when it does not take that one's input memory (plan_ops). Measured on
  // Qwen3-0.6B decode: reused at once, 17 phases per layer and no Q/K norm or attention-output
  // fusion; 6 nodes later, 11 phases and both fusions; with the GLU and ROPE fusions, 8 and 10
  // nodes later leave V's product and store in later phases on some layers, 12 gives 8 phases on
  // every layer.
  size_t reuse_after() const override { return kReuseAfter; }

  struct Stats {
    uint64_t parts = 0, launches = 0, ops = 0;  // ops: kernel calls (several per uberkernel launch)
    double device_s = 0;                        // modelled device time of every command
    double launch_device_s = 0;                 // ... of the launches alone
  };
  const Stats& stats() const { return stats_; }
  const EtMemory& memory() const { return memory_; }
  Device& device() { return *device_; }


 private:
  static constexpr size_t kReuseAfter = 12;
  struct Launched {
    std::vector<KernelCall> calls;  // one, or an uberkernel's sub-kernels
    std::vector<EtOp> ops;
    std::vector<bool> waits;        // per call: it waits for every hart to finish the calls before it
  };
  // Per call of launch l (recorded as r): host interval, modelled device time, flops. An
  // uberkernel's calls between the same two barriers ran together: each gets the phase's host
  // interval and a share of its device time in proportion to its own work.
  struct CallTime {
    double host_start_s = 0, host_end_s = 0, device_s = 0;
    uint64_t flops = 0, bytes = 0;
  };
  static std::vector<CallTime> call_times(const ProfileRecord& r, const Launched& l, bool uber);
  void copy_in(const Graph& g);
  std::vector<Launched> launch(const std::vector<EtOp>& ops);
  void enqueue(const Launched& l);
  void report(const std::vector<ProfileRecord>& recs, const std::vector<Launched>& launched, double origin_us);

  std::string name_ = "ET";
  std::shared_ptr<SharedDevice> shared_;
  Device* device_;  // shared_'s
  EtOptions options_;
  Stream stream_ = 0;
  uint64_t mask_ = 0;
  std::vector<Kernel> kernels_;  // by kernel id
  Kernel uber_;
  EtMemory memory_;
  Stats stats_;
  double device_clock_us_ = 0;
  std::optional<Trace> trace_;
};

// The backend on the process's emulator et0, opened (taking the device lock: throws hart::Error
// "device et0 is in use by process N" when another process holds it) unless a backend has it.
std::unique_ptr<EtBackend> open_et_backend(const EtOptions& options);

}  // namespace hart::et
