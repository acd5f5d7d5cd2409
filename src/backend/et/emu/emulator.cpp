#include "backend/et/emu/emulator.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "backend/et/device/et_params.h"
#include "backend/et/device_lock.h"
#include "backend/et/emu/harts.h"
#include "backend/et/emu/kernel_table.h"
#include "backend/et/emu/launch_params.h"
#include "backend/et/emu/memory.h"
#include "common/error.h"

namespace hart::et::emu {

namespace {

using Clock = std::chrono::steady_clock;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

struct Command {
  enum class Type { H2D, D2H, Launch, Event };
  Type type = Type::Event;
  Stream stream = 0;
  DeviceAddr addr = 0;  // copies
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t bytes = 0;
  uint32_t kernel = 0;  // launches
  std::vector<uint64_t> params;  // 8-byte aligned copy of the parameter block
  uint64_t shire_mask = 0;
  Event event = 0;      // events
};

const EmuConfig& validated(const EmuConfig& c) {
  if (c.shires == 0 || c.shires > 64) throw Error("emulator: shires must be 1..64, not " + std::to_string(c.shires));
  return c;
}

struct StreamState {
  size_t pending = 0;
  std::optional<std::string> error;
};

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
  ~Emulator() override;

  const Properties& properties() const override { return props_; }
  DeviceAddr malloc(uint64_t bytes, uint64_t align) override { return memory_.allocate(bytes, align); }
  void free(DeviceAddr addr) override { memory_.release(addr); }
  Stream create_stream() override;
  void destroy_stream(Stream s) override;
  void memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) override;
  void memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) override;
  void memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) override;
  void memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) override;
  Event record_event(Stream s) override;
  bool event_done(Event e) override;
  void wait_event(Event e) override;
  Kernel load_kernel(std::string_view name) override;
  Kernel add_kernel(std::string_view name, et_kernel_fn fn) override;
  void launch(Stream s, Kernel k, const void* params, size_t params_bytes, uint64_t shire_mask) override;
  void wait(Stream s) override;
  std::optional<std::string> take_error(Stream s) override;
  void profiler_start() override;
  std::vector<ProfileRecord> profiler_stop() override;

 private:
  void check_range(const char* what, DeviceAddr addr, uint64_t bytes) const;
  void enqueue(Command c);
  StreamState& stream_locked(Stream s);
  void executor_loop();
  std::optional<std::string> execute(const Command& c, ProfileRecord& rec);
  double since_start(Clock::time_point t) const { return std::chrono::duration<double>(t - prof_start_).count(); }
  void profile(ProfileRecord rec);

  EmuConfig config_;
  Properties props_;
  DeviceLock lock_;  // first: a second opener fails before anything else is set up
  DeviceMemory memory_;
  std::unique_ptr<LaunchRunner> runner_;

  std::mutex kernels_mutex_;
  std::vector<std::pair<std::string, et_kernel_fn>> kernels_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Command> queue_;
  std::map<Stream, StreamState> streams_;
  Stream next_stream_ = 1;
  std::map<Event, bool> events_;  // recorded and not yet waited for
  Event next_event_ = 1;
  bool stopping_ = false;

  std::mutex prof_mutex_;
  bool profiling_ = false;
  Clock::time_point prof_start_;
  double device_clock_s_ = 0;
  std::vector<ProfileRecord> records_;

  std::thread executor_;  // last: starts once everything above exists
};

Emulator::Emulator(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner)
    : config_(validated(config)),
      props_{config.name, config.shires, ET_MINIONS_PER_SHIRE, ET_HARTS_PER_MINION, config.memory_bytes,
             config.cost.clock_hz, ET_CACHE_LINE},
      lock_(config.name, config.lock_dir),
      memory_(config.memory_bytes, config.memory_base),
      runner_(std::move(runner)) {
  for (const auto& [name, fn] : builtin_kernels()) kernels_.emplace_back(std::string(name), fn);
  streams_[0] = {};
  executor_ = std::thread([this] { executor_loop(); });
}

Emulator::~Emulator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  executor_.join();
}

Stream Emulator::create_stream() {
  std::lock_guard lock(mutex_);
  streams_[next_stream_] = {};
  return next_stream_++;
}

void Emulator::destroy_stream(Stream s) {
  if (s == 0) throw Error("the default stream cannot be destroyed");
  wait(s);
  std::lock_guard lock(mutex_);
  streams_.erase(s);
}

StreamState& Emulator::stream_locked(Stream s) {
  const auto it = streams_.find(s);
  if (it == streams_.end()) throw Error("unknown stream " + std::to_string(s) + " on device " + props_.name);
  return it->second;
}

void Emulator::check_range(const char* what, DeviceAddr addr, uint64_t bytes) const {
  if (!memory_.translate(addr, bytes)) {
    throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(addr) +
                ": not inside one device allocation");
  }
}

void Emulator::enqueue(Command c) {
  {
    std::lock_guard lock(mutex_);
    stream_locked(c.stream).pending++;
    queue_.push_back(std::move(c));
  }
  cv_.notify_all();
}

void Emulator::memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) {
  check_range("memcpy_h2d", dst, bytes);
  Command c;
  c.type = Command::Type::H2D;
  c.stream = s;
  c.addr = dst;
  c.src = src;
  c.bytes = bytes;
  enqueue(std::move(c));
}

void Emulator::memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) {
  check_range("memcpy_d2h", src, bytes);
  Command c;
  c.type = Command::Type::D2H;
  c.stream = s;
  c.addr = src;
  c.dst = dst;
  c.bytes = bytes;
  enqueue(std::move(c));
}

void Emulator::memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) {
  memcpy_h2d_async(0, dst, src, bytes);
  wait(0);
  if (auto err = take_error(0)) throw Error(*err);
}

void Emulator::memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) {
  memcpy_d2h_async(0, dst, src, bytes);
  wait(0);
  if (auto err = take_error(0)) throw Error(*err);
}

Event Emulator::record_event(Stream s) {
  Command c;
  c.type = Command::Type::Event;
  c.stream = s;
  {
    std::lock_guard lock(mutex_);
    c.event = next_event_++;
    events_[c.event] = false;
  }
  const Event e = c.event;
  enqueue(std::move(c));
  return e;
}

bool Emulator::event_done(Event e) {
  std::lock_guard lock(mutex_);
  if (e == 0 || e >= next_event_) throw Error("unknown event " + std::to_string(e));
  const auto it = events_.find(e);
  return it == events_.end() || it->second;  // absent: already waited for
}

void Emulator::wait_event(Event e) {
  std::unique_lock lock(mutex_);
  if (e == 0 || e >= next_event_) throw Error("unknown event " + std::to_string(e));
  cv_.wait(lock, [&] {
    const auto it = events_.find(e);
    return it == events_.end() || it->second;
  });
  events_.erase(e);
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
  if (shire_mask == 0 || (shire_mask & ~props_.all_shires_mask()) != 0) {
    throw Error("launch: shire mask " + hex(shire_mask) + " is empty or names shires the device lacks (" +
                std::to_string(props_.shires) + ")");
  }
  Command c;
  c.type = Command::Type::Launch;
  c.stream = s;
  c.kernel = k.id;
  c.shire_mask = shire_mask;
  c.params.resize((params_bytes + 7) / 8);
  if (params_bytes) std::memcpy(c.params.data(), params, params_bytes);
  enqueue(std::move(c));
}

void Emulator::wait(Stream s) {
  const auto start = Clock::now();
  {
    std::unique_lock lock(mutex_);
    stream_locked(s);
    cv_.wait(lock, [&] { return stream_locked(s).pending == 0; });
  }
  ProfileRecord rec;
  rec.kind = ProfileRecord::Kind::Wait;
  rec.stream = s;
  {
    std::lock_guard lock(prof_mutex_);
    if (!profiling_) return;
    rec.host_start_s = since_start(start);
    rec.host_end_s = since_start(Clock::now());
    records_.push_back(std::move(rec));
  }
}

std::optional<std::string> Emulator::take_error(Stream s) {
  std::lock_guard lock(mutex_);
  return std::exchange(stream_locked(s).error, std::nullopt);
}

void Emulator::profiler_start() {
  std::lock_guard lock(prof_mutex_);
  profiling_ = true;
  prof_start_ = Clock::now();
  device_clock_s_ = 0;
  records_.clear();
}

std::vector<ProfileRecord> Emulator::profiler_stop() {
  std::lock_guard lock(prof_mutex_);
  profiling_ = false;
  return std::exchange(records_, {});
}

void Emulator::profile(ProfileRecord rec) {
  std::lock_guard lock(prof_mutex_);
  if (!profiling_) return;
  rec.device_start_s = device_clock_s_;
  device_clock_s_ += rec.device_s;
  records_.push_back(std::move(rec));
}

std::optional<std::string> Emulator::execute(const Command& c, ProfileRecord& rec) {
  rec.stream = c.stream;
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
      rec.sysemu_cycles = out.sim_cycles;
      rec.sysemu_insns = out.sim_insns;
      for (const et_counters& k : out.counters) {
        rec.flops += k.flops;
        rec.bytes_read += k.bytes_read;
        rec.bytes_written += k.bytes_written;
      }
      const std::vector<double> phases = config_.cost.phase_seconds(out.barrier_counters, out.counters);
      rec.device_s = config_.cost.launch_overhead_s;
      for (size_t p = 0; p < phases.size(); p++) {
        rec.device_s += phases[p];
        const Clock::time_point end = p < out.barrier_times.size() ? out.barrier_times[p] : Clock::now();
        std::lock_guard lock(prof_mutex_);
        rec.phases.push_back({since_start(end), phases[p]});
      }
      if (!out.seams.empty() && !out.seams[0].empty()) rec.sub_kernels = config_.cost.sub_kernels(out.seams, out.counters);
      return out.error;
    }
    case Command::Type::Event:
      return std::nullopt;
  }
  return std::nullopt;
}

void Emulator::executor_loop() {
  for (;;) {
    Command c;
    bool skip;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every command has run
      c = std::move(queue_.front());
      queue_.pop_front();
      skip = streams_[c.stream].error.has_value() && c.type != Command::Type::Event;
    }
    std::optional<std::string> error;
    if (!skip) {
      ProfileRecord rec;
      const auto start = Clock::now();
      error = execute(c, rec);
      if (c.type != Command::Type::Event) {
        rec.failed = error.has_value();
        {
          std::lock_guard lock(prof_mutex_);
          rec.host_start_s = since_start(start);
          rec.host_end_s = since_start(Clock::now());
        }
        profile(std::move(rec));
      }
    }
    {
      std::lock_guard lock(mutex_);
      StreamState& st = streams_[c.stream];
      if (error && !st.error) st.error = std::move(error);
      st.pending--;
      if (c.type == Command::Type::Event) {
        const auto it = events_.find(c.event);
        if (it != events_.end()) it->second = true;
      }
    }
    cv_.notify_all();
  }
}

}  // namespace

std::unique_ptr<EmuDevice> open_emulator(const EmuConfig& config) {
  return std::make_unique<Emulator>(validated(config), std::make_unique<FiberRunner>(validated(config)));
}

std::unique_ptr<EmuDevice> open_emulated_device(const EmuConfig& config, std::unique_ptr<LaunchRunner> runner) {
  return std::make_unique<Emulator>(config, std::move(runner));
}

}  // namespace hart::et::emu
