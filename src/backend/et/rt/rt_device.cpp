#include "backend/et/rt/rt_device.h"

#include <device-layer/IDeviceLayer.h>
#include <runtime/IProfileEvent.h>
#include <runtime/IProfiler.h>
#include <runtime/IRuntime.h>
#include <sw-sysemu/SysEmuOptions.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "backend/et/command_queue.h"
#include "backend/et/device/et_params.h"
#include "backend/et/emu/emulator.h"
#include "backend/et/emu/launch_params.h"
#include "backend/et/hex.h"
#include "backend/et/minion/et_minion.h"
#include "backend/et/minion/status_text.h"
#include "backend/et/rt/et_rt.h"
#include "common/error.h"

namespace hart::et::etrt {

namespace fs = std::filesystem;

namespace {

const char* const kKernelNames[] = {
#define ET_KERNEL_ENTRY(name) #name,
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
};

bool env_off(const char* v) { return !v || !*v || std::strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0; }

std::string non_empty_file(const std::string& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) == 0) {
    throw Error(std::string("et-rt: ") + what + " '" + path + "' is missing or empty");
  }
  return path;
}

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> data{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  if (!f.eof() && !f) throw Error("et-rt: cannot read " + path);
  std::vector<std::byte> out(data.size());
  std::memcpy(out.data(), data.data(), data.size());
  return out;
}

std::byte* ptr(DeviceAddr a) { return reinterpret_cast<std::byte*>(a); }
DeviceAddr addr(const std::byte* p) { return reinterpret_cast<DeviceAddr>(p); }

// The card's device files, named in the error when absent.
std::unique_ptr<dev::IDeviceLayer> pcie_layer() {
  for (const char* f : {"/dev/et0_mgmt", "/dev/et0_ops"}) {
    if (access(f, F_OK) != 0) {
      throw Error(std::string("et-rt: no ET-SoC-1 card: ") + f +
                  " does not exist (HART_ET_RT_LAYER=sysemu runs on the vendor's simulator)");
    }
  }
  return dev::IDeviceLayer::createPcieDeviceLayer(true, false);
}

std::unique_ptr<dev::IDeviceLayer> sysemu_layer(const RtConfig& c, const std::string& run_dir) {
  const SysemuFiles f = sysemu_files(c.platform);
  ::emu::SysEmuOptions o;
  o.bootromTrampolineToBL2ElfPath = f.bootrom;
  o.spBL2ElfPath = f.sp_bl2;
  o.machineMinionElfPath = f.machine_minion;
  o.masterMinionElfPath = f.master_minion;
  o.workerMinionElfPath = f.worker_minion;
  o.executablePath = f.sys_emu;
  o.runDir = run_dir + "/";
  o.maxCycles = c.max_cycles;
  // Every compute shire and the master shire: the firmware waits for all of them (the SP reads an
  // efuse mask of 32); a launch's shire mask picks the ones that run the kernel.
  o.minionShiresMask = 0x1FFFFFFFFull;
  o.puUart0Path = o.runDir + "pu_uart0_tx.log";
  o.puUart1Path = o.runDir + "pu_uart1_tx.log";
  o.spUart0Path = o.runDir + "spio_uart0_tx.log";
  o.spUart1Path = o.runDir + "spio_uart1_tx.log";
  o.startGdb = false;
  o.logFile = o.runDir + "sysemu.log";
  o.memcheck = c.mem_check;
  return dev::IDeviceLayer::createSysEmuDeviceLayer(o);
}

// The runtime's profiler, kept for one fact: each kernel launch's execution time as the Master
// Minion firmware measured it (its response's device_cmd_execute_dur, in minion cycles of its PMC
// counter 3, which sysemu advances with its own cycle count), by the launch's event.
class LaunchCycles final : public ::rt::profiling::IProfilerRecorder {
 public:
  void start(std::ostream&, OutputType) override {}
  void stop() override {}
  void record(const ::rt::profiling::ProfileEvent& e) override {
    if (e.getClass() != ::rt::profiling::Class::ResponseReceived) return;
    if (e.getResponseType() != ::rt::profiling::ResponseType::Kernel) return;
    const auto ev = e.getEvent();
    const auto cycles = e.getDeviceCmdExecDur();
    if (!ev || !cycles) return;
    std::lock_guard lock(mutex_);
    cycles_[uint64_t(*ev)] = *cycles;
  }
  void recordNowOrAtStart(const ::rt::profiling::ProfileEvent& e) override { record(e); }
  std::optional<uint64_t> take(::rt::EventId ev) {
    std::lock_guard lock(mutex_);
    const auto it = cycles_.find(uint64_t(ev));
    if (it == cycles_.end()) return std::nullopt;
    const uint64_t c = it->second;
    cycles_.erase(it);
    return c;
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, uint64_t> cycles_;
};

class RtDevice final : public Device {
 public:
  explicit RtDevice(RtConfig config);
  ~RtDevice() override;

  const Properties& properties() const override { return props_; }
  DeviceAddr malloc(uint64_t bytes, uint64_t align) override;
  void free(DeviceAddr a) override;
  Stream create_stream() override { return queue_->create_stream(); }
  void destroy_stream(Stream s) override { queue_->destroy_stream(s); }
  void memcpy_h2d(DeviceAddr dst, const void* src, uint64_t bytes) override {
    check_range("memcpy_h2d", dst, bytes);
    queue_->run_blocking(copy_command(Command::Type::H2D, 0, dst, const_cast<void*>(src), bytes));
  }
  void memcpy_d2h(void* dst, DeviceAddr src, uint64_t bytes) override {
    check_range("memcpy_d2h", src, bytes);
    queue_->run_blocking(copy_command(Command::Type::D2H, 0, src, dst, bytes));
  }
  void memcpy_h2d_async(Stream s, DeviceAddr dst, const void* src, uint64_t bytes) override {
    check_range("memcpy_h2d", dst, bytes);
    queue_->enqueue(copy_command(Command::Type::H2D, s, dst, const_cast<void*>(src), bytes));
  }
  void memcpy_d2h_async(Stream s, void* dst, DeviceAddr src, uint64_t bytes) override {
    check_range("memcpy_d2h", src, bytes);
    queue_->enqueue(copy_command(Command::Type::D2H, s, src, dst, bytes));
  }
  Event record_event(Stream s) override { return queue_->record_event(s); }
  bool event_done(Event e) override { return queue_->event_done(e); }
  void wait_event(Event e) override { queue_->wait_event(e); }
  Kernel load_kernel(std::string_view name) override;
  void launch(Stream s, Kernel k, const void* params, size_t params_bytes, uint64_t shire_mask) override {
    if (k.id >= ET_KERNEL_COUNT) throw Error("launch of unknown kernel handle " + std::to_string(k.id));
    emu::check_launch_params(k.id, params, params_bytes);
    queue_->enqueue(launch_command(props_, s, k, params, params_bytes, shire_mask));
  }
  void wait(Stream s) override { queue_->wait(s); }
  std::optional<std::string> take_error(Stream s) override { return queue_->take_error(s); }
  void profiler_start() override { queue_->profiler_start(); }
  std::vector<ProfileRecord> profiler_stop() override { return queue_->profiler_stop(); }

 private:
  void check_range(const char* what, DeviceAddr a, uint64_t bytes);
  std::optional<std::string> execute(const Command& c, ProfileRecord& rec);
  std::optional<std::string> run_launch(const Command& c, ProfileRecord& rec);
  // Waits for ev; the stream's errors (or the time-out) as one line.
  std::optional<std::string> finish(::rt::EventId ev, const std::string& what);
  // Blocking runtime copies of the device's own buffers; throw on failure.
  void put(std::byte* dst, const void* src, size_t bytes);
  void get(void* dst, const std::byte* src, size_t bytes);
  ::rt::KernelId loaded(uint32_t id);
  void upload_allocations();

  RtConfig config_;
  Properties props_;
  std::string run_dir_;
  bool owns_run_dir_ = false;
  std::shared_ptr<dev::IDeviceLayer> layer_;
  ::rt::RuntimePtr rt_;
  LaunchCycles* launch_cycles_ = nullptr;  // on the simulator: the runtime's profiler (owned by it)
  ::rt::DeviceId dev_{};
  ::rt::StreamId st_{};  // one runtime stream: the queue runs one command at a time

  std::mutex mem_mutex_;
  std::map<DeviceAddr, uint64_t> live_;  // hart's allocations: start -> bytes
  uint64_t live_version_ = 0;

  // Owned by the executor thread (the queue's): the kernels' set-aside memory (et_rt.h).
  std::byte* status_ = nullptr;
  std::byte* table_ = nullptr;
  size_t table_capacity_ = 0;  // entries
  uint64_t table_version_ = ~0ull;
  uint32_t table_count_ = 0;
  std::byte* sync_ = nullptr;
  uint32_t next_sync_ = ET_RT_SYNC_LINES;  // the ring is zeroed when it wraps (and first)
  std::byte* scratch_ = nullptr;
  std::byte* stacks_ = nullptr;
  std::vector<std::optional<::rt::KernelId>> kernels_;

  std::unique_ptr<CommandQueue> queue_;  // last: its executor uses everything above
};

RtDevice::RtDevice(RtConfig config) : config_(std::move(config)), kernels_(ET_KERNEL_COUNT) {
  std::error_code ec;
  if (!fs::is_directory(config_.kernel_dir, ec)) {
    throw Error("et-rt: no kernels at '" + config_.kernel_dir + "' (HART_ET_RT_KERNELS; built with the minion program)");
  }
  try {
    if (config_.layer == RtConfig::Layer::Sysemu) {
      run_dir_ = config_.run_dir;
      if (run_dir_.empty()) {
        std::string dir = (fs::temp_directory_path() / "hart-et-rt-XXXXXX").string();
        if (!mkdtemp(dir.data())) throw Error("et-rt: cannot create a run directory: " + std::string(std::strerror(errno)));
        run_dir_ = dir;
        owns_run_dir_ = true;
      }
      fs::create_directories(run_dir_);
      layer_ = sysemu_layer(config_, run_dir_);
    } else {
      layer_ = pcie_layer();
    }
    rt_ = ::rt::IRuntime::create(layer_);
    if (config_.layer == RtConfig::Layer::Sysemu) {
      auto recorder = std::make_unique<LaunchCycles>();
      launch_cycles_ = recorder.get();
      rt_->setProfiler(std::move(recorder));
    }
    const std::vector<::rt::DeviceId> devices = rt_->getDevices();
    if (devices.empty()) throw Error("et-rt: the runtime found no device");
    dev_ = devices[0];
    const ::rt::DeviceProperties p = rt_->getDeviceProperties(dev_);
    const uint32_t shires = uint32_t(__builtin_popcountll(p.computeMinionShireMask_));
    if (p.computeMinionShireMask_ != (1ull << shires) - 1) {
      throw Error("et-rt: compute shires 0x" + std::to_string(p.computeMinionShireMask_) + " are not shires 0..n-1");
    }
    props_ = {"rt0", shires, ET_MINIONS_PER_SHIRE, ET_HARTS_PER_MINION, p.memorySize_,
              p.frequency_ ? p.frequency_ * 1e6 : config_.cost.clock_hz, ET_CACHE_LINE};
    st_ = rt_->createStream(dev_);
    const uint64_t harts = uint64_t(shires) * ET_HARTS_PER_SHIRE;
    status_ = rt_->mallocDevice(dev_, harts * sizeof(et_minion_status), ET_CACHE_LINE);
    sync_ = rt_->mallocDevice(dev_, ET_RT_SYNC_LINES * ET_CACHE_LINE, ET_CACHE_LINE);
    scratch_ = rt_->mallocDevice(dev_, uint64_t(shires) * ET_SHIRE_SCRATCH_BYTES, ET_CACHE_LINE);
    stacks_ = rt_->mallocDevice(dev_, harts * ET_RT_STACK_BYTES, 4096);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(std::string("et-rt: the ET runtime did not start: ") + e.what());
  }
  queue_ = std::make_unique<CommandQueue>(props_.name, [this](const Command& c, ProfileRecord& rec) { return execute(c, rec); });
}

RtDevice::~RtDevice() {
  queue_.reset();  // runs what is queued
  try {
    if (rt_) rt_->waitForStream(st_);
    rt_.reset();  // before the device layer it runs on (the simulator stops with it)
    layer_.reset();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hart: et-rt: at close: %s\n", e.what());
  }
  std::error_code ec;
  if (owns_run_dir_) fs::remove_all(run_dir_, ec);
}

DeviceAddr RtDevice::malloc(uint64_t bytes, uint64_t align) {
  if (bytes == 0) bytes = 1;
  if (align < 64 || (align & (align - 1)) || align > (1u << 31)) throw Error("et-rt: bad alignment " + std::to_string(align));
  std::byte* p = nullptr;
  try {
    p = rt_->mallocDevice(dev_, bytes, uint32_t(align));
  } catch (const std::exception& e) {
    throw Error("et-rt: cannot allocate " + std::to_string(bytes) + " bytes of device memory: " + e.what());
  }
  std::lock_guard lock(mem_mutex_);
  live_[addr(p)] = bytes;
  live_version_++;
  return addr(p);
}

void RtDevice::free(DeviceAddr a) {
  {
    std::lock_guard lock(mem_mutex_);
    if (!live_.erase(a)) throw Error("et-rt: free of an address that is not an allocation");
    live_version_++;
  }
  rt_->freeDevice(dev_, ptr(a));
}

void RtDevice::check_range(const char* what, DeviceAddr a, uint64_t bytes) {
  std::lock_guard lock(mem_mutex_);
  auto it = live_.upper_bound(a);
  if (it != live_.begin()) {
    --it;
    if (a - it->first <= it->second && bytes <= it->second - (a - it->first)) return;
  }
  throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(a) + ": not inside one device allocation");
}

Kernel RtDevice::load_kernel(std::string_view name) {
  for (uint32_t i = 0; i < ET_KERNEL_COUNT; i++) {
    if (name == kKernelNames[i]) {
      non_empty_file(config_.kernel_dir + "/" + kKernelNames[i] + ".elf", "the kernel");
      return Kernel{i};
    }
  }
  throw Error("device " + props_.name + " has no kernel named '" + std::string(name) + "'");
}

std::optional<std::string> RtDevice::finish(::rt::EventId ev, const std::string& what) {
  if (!rt_->waitForEvent(ev, std::chrono::seconds(config_.timeout_s))) {
    rt_->abortStream(st_);
    rt_->waitForStream(st_, std::chrono::seconds(config_.timeout_s));
    rt_->retrieveStreamErrors(st_);
    return what + ": not done within " + std::to_string(config_.timeout_s) + " s (HART_ET_RT_TIMEOUT)";
  }
  const std::vector<::rt::StreamError> errors = rt_->retrieveStreamErrors(st_);
  if (errors.empty()) return std::nullopt;
  const ::rt::StreamError& e = errors[0];
  if (e.errorContext_) {  // a U-mode exception names its hart, as the bare-metal program's trap does
    for (const ::rt::ErrorContext& ctx : *e.errorContext_) {
      if (ctx.type_ != 1) continue;
      et_minion_status s{};
      s.state = ET_MINION_TRAP;
      s.hart = uint32_t(ctx.hartId_);
      s.addr = ctx.mepc_;
      s.bytes = ctx.mcause_;
      s.value = ctx.mtval_;
      return what + ": " + *hart_status_error(s);
    }
  }
  return what + ": " + e.getString();
}

void RtDevice::put(std::byte* dst, const void* src, size_t bytes) {
  const auto ev = rt_->memcpyHostToDevice(st_, static_cast<const std::byte*>(src), dst, bytes, true);
  if (auto err = finish(ev, "et-rt: a copy to the device")) throw Error(*err);
}

void RtDevice::get(void* dst, const std::byte* src, size_t bytes) {
  const auto ev = rt_->memcpyDeviceToHost(st_, src, static_cast<std::byte*>(dst), bytes, true);
  if (auto err = finish(ev, "et-rt: a copy from the device")) throw Error(*err);
}

::rt::KernelId RtDevice::loaded(uint32_t id) {
  if (!kernels_[id]) {
    const std::vector<std::byte> elf = read_file(non_empty_file(config_.kernel_dir + "/" + kKernelNames[id] + ".elf", "the kernel"));
    const ::rt::LoadCodeResult r = rt_->loadCode(st_, elf.data(), elf.size());
    if (auto err = finish(r.event_, std::string("loadCode of ") + kKernelNames[id] + ".elf")) throw Error(*err);
    kernels_[id] = r.kernel_;
  }
  return *kernels_[id];
}

// The table et_ptr checks, sent again only when the allocations have changed since.
void RtDevice::upload_allocations() {
  std::vector<et_minion_alloc> table;
  {
    std::lock_guard lock(mem_mutex_);
    if (live_version_ == table_version_) return;
    table_version_ = live_version_;
    for (const auto& [a, bytes] : live_) table.push_back({a, bytes});
  }
  if (table.size() > table_capacity_) {
    if (table_) rt_->freeDevice(dev_, table_);
    table_capacity_ = std::max<size_t>(table.size() * 2, 256);
    table_ = rt_->mallocDevice(dev_, table_capacity_ * sizeof(et_minion_alloc), ET_CACHE_LINE);
  }
  if (!table.empty()) put(table_, table.data(), table.size() * sizeof(et_minion_alloc));
  table_count_ = uint32_t(table.size());
}

std::optional<std::string> RtDevice::execute(const Command& c, ProfileRecord& rec) {
  if (c.type == Command::Type::Launch) return run_launch(c, rec);
  const bool h2d = c.type == Command::Type::H2D;
  rec.kind = h2d ? ProfileRecord::Kind::CopyH2D : ProfileRecord::Kind::CopyD2H;
  rec.bytes = c.bytes;
  rec.device_s = config_.cost.copy_seconds(c.bytes);
  const ::rt::EventId ev = h2d ? rt_->memcpyHostToDevice(st_, static_cast<const std::byte*>(c.src), ptr(c.addr), c.bytes, true)
                               : rt_->memcpyDeviceToHost(st_, ptr(c.addr), static_cast<std::byte*>(c.dst), c.bytes, true);
  return finish(ev, h2d ? "memcpy_h2d" : "memcpy_d2h");
}

std::optional<std::string> RtDevice::run_launch(const Command& c, ProfileRecord& rec) {
  const std::string name = kKernelNames[c.kernel];
  rec.kind = ProfileRecord::Kind::Launch;
  rec.name = name;
  rec.shire_mask = c.shire_mask;
  const ::rt::KernelId kernel = loaded(c.kernel);
  upload_allocations();
  if (next_sync_ == ET_RT_SYNC_LINES) {
    const std::vector<uint8_t> zeros(ET_RT_SYNC_LINES * ET_CACHE_LINE, 0);
    put(sync_, zeros.data(), zeros.size());
    next_sync_ = 0;
  }
  std::vector<uint64_t> blob(sizeof(et_rt_args) / 8 + c.params.size());
  et_rt_args args{};
  args.status = addr(status_);
  args.allocs = addr(table_);
  args.alloc_count = table_count_;
  args.shire_mask = c.shire_mask;
  args.sync = addr(sync_) + uint64_t(next_sync_++) * ET_CACHE_LINE;
  args.scratch = addr(scratch_);
  args.params_bytes = c.params.size() * 8;
  std::memcpy(blob.data(), &args, sizeof args);
  std::copy(c.params.begin(), c.params.end(), blob.begin() + sizeof(et_rt_args) / 8);

  // The firmware puts hart h's stack top at base + size - h * (size / enabled harts): the stacks
  // of the highest shire's harts end at stacks_, whichever shires are enabled.
  const uint32_t top_shire = 63 - __builtin_clzll(c.shire_mask);
  const uint64_t span = uint64_t(top_shire + 1) * ET_HARTS_PER_SHIRE;
  const uint64_t enabled = uint64_t(__builtin_popcountll(c.shire_mask)) * ET_HARTS_PER_SHIRE;
  ::rt::KernelLaunchOptions options;
  options.setShireMask(c.shire_mask);
  options.setBarrier(true);
  options.setStackConfig(stacks_ + (span - enabled) * ET_RT_STACK_BYTES, enabled * ET_RT_STACK_BYTES);
  const ::rt::EventId ev = rt_->kernelLaunch(st_, kernel, reinterpret_cast<const std::byte*>(blob.data()),
                                             blob.size() * 8, options);
  std::optional<std::string> rt_error = finish(ev, "kernel " + name);

  // The harts' slots: their counters, and what a failing hart wrote.
  const uint32_t low_shire = uint32_t(__builtin_ctzll(c.shire_mask));
  std::vector<et_minion_status> slots((top_shire + 1 - low_shire) * ET_HARTS_PER_SHIRE);
  get(slots.data(), status_ + uint64_t(low_shire) * ET_HARTS_PER_SHIRE * sizeof(et_minion_status),
      slots.size() * sizeof(et_minion_status));
  emu::LaunchOutcome out;
  for (uint32_t h = 0; h < slots.size(); h++) {
    if (!(c.shire_mask >> (low_shire + h / ET_HARTS_PER_SHIRE) & 1)) continue;
    if (auto e = hart_status_error(slots[h]); e && !out.error) out.error = "kernel " + name + ": " + *e;
    out.counters.push_back(slots[h].counters);
  }
  if (!out.error) out.error = rt_error;
  if (launch_cycles_) out.sim_cycles = launch_cycles_->take(ev);  // no retired instructions: U-mode cannot count them
  emu::record_outcome(config_.cost, out, *queue_, rec);
  return out.error;
}

}  // namespace

RtConfig RtConfig::from_env() {
  RtConfig c;
  const char* layer = std::getenv("HART_ET_RT_LAYER");
  if (layer && std::strcmp(layer, "sysemu") == 0) c.layer = RtConfig::Layer::Sysemu;
  else if (layer && std::strcmp(layer, "pcie") != 0) throw Error(std::string("HART_ET_RT_LAYER: '") + layer + "' is not pcie or sysemu");
  else if (!layer && !env_off(std::getenv("GGML_ET_SYSEMU"))) c.layer = RtConfig::Layer::Sysemu;
  c.platform = "/opt/et";
  for (const char* var : {"ET_TOOLCHAIN", "TOOLCHAIN_ROOT"}) {
    if (const char* v = std::getenv(var); v && *v) {
      c.platform = v;
      break;
    }
  }
  const char* kernels = std::getenv("HART_ET_RT_KERNELS");
  c.kernel_dir = kernels ? kernels : HART_ET_RT_KERNEL_DIR;
  if (const char* dir = std::getenv("HART_ET_RT_DIR")) c.run_dir = dir;
  const auto number = [](const char* var, uint64_t& out) {
    const char* v = std::getenv(var);
    if (!v) return;
    char* end = nullptr;
    const uint64_t n = std::strtoull(v, &end, v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? 16 : 10);
    if (end == v || *end || n == 0) throw Error(std::string(var) + ": '" + v + "' is not a positive number");
    out = n;
  };
  uint64_t timeout = c.timeout_s;
  number("HART_ET_SYSEMU_MAX_CYCLES", c.max_cycles);
  number("HART_ET_RT_TIMEOUT", timeout);
  c.timeout_s = unsigned(timeout);
  if (const char* check = std::getenv("HART_ET_SYSEMU_MEM_CHECK")) c.mem_check = std::strcmp(check, "0") != 0;
  return c;
}

SysemuFiles sysemu_files(const std::string& platform) {
  const std::string fw = platform + "/lib/esperanto-fw/";
  const char* what = "firmware file (ET_TOOLCHAIN / TOOLCHAIN_ROOT / /opt/et: an et-platform install)";
  SysemuFiles f;
  f.bootrom = non_empty_file(fw + "BootromTrampolineToBL2/BootromTrampolineToBL2.elf", what);
  f.sp_bl2 = non_empty_file(fw + "ServiceProcessorBL2/fast-boot/ServiceProcessorBL2_fast-boot.elf", what);
  f.machine_minion = non_empty_file(fw + "MachineMinion/MachineMinion.elf", what);
  f.master_minion = non_empty_file(fw + "MasterMinion/MasterMinion.elf", what);
  f.worker_minion = non_empty_file(fw + "WorkerMinion/WorkerMinion.elf", what);
  f.sys_emu = non_empty_file(platform + "/bin/sys_emu", "simulator");
  return f;
}

std::unique_ptr<Device> open_rt(RtConfig config) { return std::make_unique<RtDevice>(std::move(config)); }

}  // namespace hart::et::etrt
