#include "backend/et/emu/emulator.h"

#include <cstdio>
#include <cstring>
#include <mutex>

#include "backend/et/device/et_params.h"
#include "backend/et/device_lock.h"
#include "backend/et/emu/harts.h"
#include "backend/et/emu/kernel_table.h"
#include "backend/et/emu/launch_params.h"
#include "backend/et/emu/memory.h"
#include "backend/et/hex.h"
#include "common/error.h"

namespace hart::et::emu {

namespace {

const EmuConfig& validated(const EmuConfig& c) {
  if (c.shires == 0 || c.shires > 64) throw Error("emulator: shires must be 1..64, not " + std::to_string(c.shires));
  return c;
}

// The built-in emulator's runner: the kernels compiled for the host, on HartRunner's fibers.
class FiberRunner final : public LaunchRunner {
 public:
  explicit FiberRunner(const EmuConfig& c) : harts_(c.shires, c.host_threads, c.hart_stack_bytes) {}
  LaunchOutcome run(const LaunchRequest& r, DeviceMemory& memory) override {
    const Translate translate = [&memory](uint64_t addr, uint64_t bytes) { return memory.translate(addr, bytes); };
    return harts_.run(r.name, r.fn, r.params, r.shire_mask, translate);
  }

 private:
  HartRunner harts_;
};

class Emulator final : public EmuDevice {
 public:
  Emulator(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner);

  const Properties& properties() const override { return props_; }
  DeviceAddr malloc(uint64_t bytes, uint64_t align) override { return memory_.allocate(bytes, align); }
  void free(DeviceAddr addr) override { memory_.release(addr); }
  Stream create_stream() override { return queue_.create_stream(); }
  void destroy_stream(Stream s) override { queue_.destroy_stream(s); }
  void memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) override;
  void memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) override;
  void memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) override;
  void memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) override;
  Event record_event(Stream s) override { return queue_.record_event(s); }
  bool event_done(Event e) override { return queue_.event_done(e); }
  void wait_event(Event e) override { queue_.wait_event(e); }
  Kernel load_kernel(std::string_view name) override;
  Kernel add_kernel(std::string_view name, et_kernel_fn fn) override;
  void launch(Stream s, Kernel k, const void* params, size_t params_bytes, uint64_t shire_mask) override;
  void wait(Stream s) override { queue_.wait(s); }
  std::optional<std::string> take_error(Stream s) override { return queue_.take_error(s); }
  void profiler_start() override { queue_.profiler_start(); }
  std::vector<ProfileRecord> profiler_stop() override { return queue_.profiler_stop(); }

 private:
  void check_range(const char* what, DeviceAddr addr, uint64_t bytes) const;
  std::optional<std::string> execute(const Command& c, ProfileRecord& rec);

  EmuConfig config_;
  Properties props_;
  DeviceLock lock_;  // first: a second opener fails before anything else is set up
  DeviceMemory memory_;
  std::unique_ptr<LaunchRunner> runner_;

  std::mutex kernels_mutex_;
  std::vector<std::pair<std::string, et_kernel_fn>> kernels_;

  CommandQueue queue_;  // last: its executor runs commands on everything above
};

Emulator::Emulator(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner)
    : config_(validated(config)),
      props_{config.name, config.shires, ET_MINIONS_PER_SHIRE, ET_HARTS_PER_MINION, config.memory_bytes,
             config.cost.clock_hz, ET_CACHE_LINE},
      lock_(config.name, config.lock_dir),
      memory_(config.memory_bytes, config.memory_base),
      runner_(std::move(runner)),
      queue_(config.name, [this](const Command& c, ProfileRecord& rec) { return execute(c, rec); }) {
  for (const auto& [name, fn] : builtin_kernels()) kernels_.emplace_back(std::string(name), fn);
}

void Emulator::check_range(const char* what, DeviceAddr addr, uint64_t bytes) const {
  if (!memory_.translate(addr, bytes)) {
    throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(addr) +
                ": not inside one device allocation");
  }
}

void Emulator::memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) {
  check_range("memcpy_h2d", dst, bytes);
  queue_.enqueue(copy_command(Command::Type::H2D, s, dst, const_cast<void*>(src), bytes));
}

void Emulator::memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) {
  check_range("memcpy_d2h", src, bytes);
  queue_.enqueue(copy_command(Command::Type::D2H, s, src, dst, bytes));
}

void Emulator::memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) {
  check_range("memcpy_h2d", dst, bytes);
  queue_.run_blocking(copy_command(Command::Type::H2D, 0, dst, const_cast<void*>(src), bytes));
}

void Emulator::memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) {
  check_range("memcpy_d2h", src, bytes);
  queue_.run_blocking(copy_command(Command::Type::D2H, 0, src, dst, bytes));
}

Kernel Emulator::load_kernel(std::string_view name) {
  std::lock_guard lock(kernels_mutex_);
  for (size_t i = 0; i < kernels_.size(); i++) {
    if (kernels_[i].first == name) return Kernel{uint32_t(i)};
  }
  throw Error("device " + props_.name + " has no kernel named '" + std::string(name) + "'");
}

Kernel Emulator::add_kernel(std::string_view name, et_kernel_fn fn) {
  std::lock_guard lock(kernels_mutex_);
  for (const auto& k : kernels_) {
    if (k.first == name) throw Error("kernel '" + std::string(name) + "' is already defined");
  }
  kernels_.emplace_back(std::string(name), fn);
  return Kernel{uint32_t(kernels_.size() - 1)};
}

void Emulator::launch(Stream s, Kernel k, const void* params, size_t params_bytes, uint64_t shire_mask) {
  {
    std::lock_guard lock(kernels_mutex_);
    if (k.id >= kernels_.size()) throw Error("launch of unknown kernel handle " + std::to_string(k.id));
  }
  // The built-in kernels come first, in kernels.def order, so their handles are their ids.
  if (k.id < ET_KERNEL_COUNT) check_launch_params(k.id, params, params_bytes);
  queue_.enqueue(launch_command(props_, s, k, params, params_bytes, shire_mask));
}

std::optional<std::string> Emulator::execute(const Command& c, ProfileRecord& rec) {
  switch (c.type) {
    case Command::Type::H2D:
    case Command::Type::D2H: {
      const bool h2d = c.type == Command::Type::H2D;
      rec.kind = h2d ? ProfileRecord::Kind::CopyH2D : ProfileRecord::Kind::CopyD2H;
      rec.bytes = c.bytes;
      rec.device_s = config_.cost.copy_seconds(c.bytes);
      uint8_t* dev = memory_.translate(c.addr, c.bytes);
      if (!dev) {  // freed between enqueue and execution
        return std::string(h2d ? "memcpy_h2d" : "memcpy_d2h") + " of " + std::to_string(c.bytes) + " bytes at " +
               hex(c.addr) + ": not inside one device allocation";
      }
      if (h2d) std::memcpy(dev, c.src, c.bytes);
      else std::memcpy(c.dst, dev, c.bytes);
      return std::nullopt;
    }
    case Command::Type::Launch: {
      std::pair<std::string, et_kernel_fn> kernel;
      {
        std::lock_guard lock(kernels_mutex_);
        kernel = kernels_[c.kernel];
      }
      rec.kind = ProfileRecord::Kind::Launch;
      rec.name = kernel.first;
      rec.shire_mask = c.shire_mask;
      LaunchRequest req;
      req.name = kernel.first;
      req.kernel_id = c.kernel;
      req.fn = kernel.second;
      req.params = c.params.data();
      req.params_bytes = c.params.size() * 8;
      req.shire_mask = c.shire_mask;
      LaunchOutcome out = runner_->run(req, memory_);
      record_outcome(config_.cost, out, queue_, rec);
      return out.error;
    }
    case Command::Type::Event:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void record_outcome(const CostModel& cost, const LaunchOutcome& out, CommandQueue& queue, ProfileRecord& rec) {
  rec.sysemu_cycles = out.sim_cycles;
  rec.sysemu_insns = out.sim_insns;
  for (const et_counters& k : out.counters) {
    rec.flops += k.flops;
    rec.bytes_read += k.bytes_read;
    rec.bytes_written += k.bytes_written;
  }
  const std::vector<double> phases = cost.phase_seconds(out.barrier_counters, out.counters);
  rec.device_s = cost.launch_overhead_s;
  for (size_t p = 0; p < phases.size(); p++) {
    rec.device_s += phases[p];
    const auto end = p < out.barrier_times.size() ? out.barrier_times[p] : CommandQueue::Clock::now();
    rec.phases.push_back({queue.since_start(end), phases[p]});
  }
  if (!out.seams.empty() && !out.seams[0].empty()) rec.sub_kernels = cost.sub_kernels(out.seams, out.counters);
}

std::unique_ptr<EmuDevice> open_emulator(const EmuConfig& config) {
  return std::make_unique<Emulator>(validated(config), std::make_unique<FiberRunner>(validated(config)));
}

std::unique_ptr<EmuDevice> open_emulated_device(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner) {
  return std::make_unique<Emulator>(config, std::move(runner));
}

}  // namespace hart::et::emu
