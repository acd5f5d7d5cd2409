#include "backend/et/sysemu/sysemu_device.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend/et/device/et_params.h"
#include "backend/et/hex.h"
#include "backend/et/minion/et_minion.h"
#include "backend/et/minion/status_text.h"
#include "common/error.h"

extern char** environ;

namespace hart::et::sysemu {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const void* data, size_t bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!f) throw Error("et-sysemu: cannot write " + path.string());
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string existing(const std::string& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Error(std::string(what) + " '" + path + "' does not exist");
  return path;
}

// sys_emu's log: the total cycle count ("Emulation performance: ... (N cycles / T sec)") and the
// first error or fatal line (a memory-checker hazard, max cycles reached, sleeping harts).
struct LogSummary {
  std::optional<uint64_t> cycles;
  std::string first_error;
};

LogSummary summarize(const fs::path& log) {
  LogSummary s;
  std::ifstream f(log);
  for (std::string line; std::getline(f, line);) {
    if (const size_t at = line.find(" cycles / "); at != std::string::npos && line.find("Emulation performance") != std::string::npos) {
      size_t b = at;
      while (b > 0 && std::isdigit(static_cast<unsigned char>(line[b - 1]))) b--;
      if (b < at) s.cycles = std::strtoull(line.c_str() + b, nullptr, 10);
    }
    if (s.first_error.empty() && (line.find(" FATAL ") != std::string::npos || line.find(" ERROR ") != std::string::npos)) {
      s.first_error = line;
    }
  }
  return s;
}

class SysemuRunner final : public emu::LaunchRunner {
 public:
  explicit SysemuRunner(SysemuConfig c) : config_(std::move(c)) {
    if (config_.work_dir.empty()) {
      std::string dir = (fs::temp_directory_path() / "hart-et-sysemu-XXXXXX").string();
      if (!mkdtemp(dir.data())) throw Error("et-sysemu: cannot create a work directory: " + std::string(std::strerror(errno)));
      dir_ = dir;
      owned_ = true;
    } else {
      dir_ = config_.work_dir;
      fs::create_directories(dir_);
    }
  }
  ~SysemuRunner() override {
    std::error_code ec;
    if (owned_) fs::remove_all(dir_, ec);
  }

  emu::LaunchOutcome run(const emu::LaunchRequest& r, emu::DeviceMemory& memory) override;

 private:
  int spawn(const std::vector<std::string>& args, const fs::path& log) const;

  SysemuConfig config_;
  fs::path dir_;
  bool owned_ = false;
};

int SysemuRunner::spawn(const std::vector<std::string>& args, const fs::path& log) const {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throw Error("et-sysemu: cannot start " + args[0] + ": " + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

emu::LaunchOutcome SysemuRunner::run(const emu::LaunchRequest& r, emu::DeviceMemory& memory) {
  emu::LaunchOutcome out;
  const auto fail = [&](const std::string& message) {
    out.error = "kernel " + r.name + ": " + message;
    return out;
  };
  if (r.kernel_id >= ET_KERNEL_COUNT) return fail("host code (not in kernels.def): it has no minion build");
  if (r.params_bytes > ET_MINION_PARAMS_BYTES) return fail("parameter block of " + std::to_string(r.params_bytes) + " bytes is too large");
  const std::vector<std::pair<DeviceAddr, uint64_t>> allocs = memory.allocations();
  if (allocs.size() > ET_MINION_MAX_ALLOCS) return fail(std::to_string(allocs.size()) + " device allocations: more than the launch block lists");

  std::vector<uint8_t> block(sizeof(et_minion_launch) + allocs.size() * sizeof(et_minion_alloc));
  auto* launch = reinterpret_cast<et_minion_launch*>(block.data());
  launch->kernel_id = r.kernel_id;
  launch->alloc_count = uint32_t(allocs.size());
  launch->shire_mask = r.shire_mask;
  launch->params_bytes = r.params_bytes;
  for (size_t i = 0; i < allocs.size(); i++) launch->allocs[i] = {allocs[i].first, allocs[i].second};
  write_file(dir_ / "launch.bin", block.data(), block.size());
  write_file(dir_ / "params.bin", r.params, std::max<size_t>(r.params_bytes, 8));

  const DeviceAddr base = memory.base(), end = memory.used_end();
  const uint32_t harts = uint32_t(64 - __builtin_clzll(r.shire_mask)) * ET_HARTS_PER_SHIRE;
  std::vector<std::string> args = {config_.sys_emu, "-elf_load", config_.minion_elf,
                                   "-file_load", hex(ET_MINION_LAUNCH) + "," + (dir_ / "launch.bin").string(),
                                   "-file_load", hex(ET_MINION_PARAMS) + "," + (dir_ / "params.bin").string(),
                                   "-shires", hex(r.shire_mask), "-minions", "0xFFFFFFFF",
                                   "-max_cycles", std::to_string(config_.max_cycles)};
  if (config_.mem_check) args.push_back("-mem_check");
  if (end > base) {
    write_file(dir_ / "memory.bin", memory.host_at(base), end - base);
    args.insert(args.end(), {"-file_load", hex(base) + "," + (dir_ / "memory.bin").string(), "-dump_addr", hex(base),
                             "-dump_size", std::to_string(end - base), "-dump_file", (dir_ / "memory.out").string()});
  }
  args.insert(args.end(), {"-dump_addr", hex(ET_MINION_STATUS), "-dump_size",
                           std::to_string(uint64_t(harts) * sizeof(et_minion_status)), "-dump_file",
                           (dir_ / "status.out").string()});
  const fs::path log = dir_ / "sysemu.log";
  fs::remove(dir_ / "memory.out");
  fs::remove(dir_ / "status.out");
  const int rc = spawn(args, log);
  const LogSummary summary = summarize(log);
  out.sim_cycles = summary.cycles;

  if (end > base) {  // what the kernel wrote, up to a failure, as on the built-in emulator
    const std::vector<uint8_t> image = read_file(dir_ / "memory.out");
    if (image.size() == end - base) std::memcpy(memory.host_at(base), image.data(), image.size());
  }
  const std::vector<uint8_t> raw = read_file(dir_ / "status.out");
  if (summary.first_error.find("max cycles") != std::string::npos) {
    return fail("did not finish within " + std::to_string(config_.max_cycles) +
                " cycles (sys_emu -max_cycles; HART_ET_SYSEMU_MAX_CYCLES)");
  }
  if (raw.size() != uint64_t(harts) * sizeof(et_minion_status)) {
    return fail("sys_emu exited with " + std::to_string(rc) + " and no status dump" +
                (summary.first_error.empty() ? " (its log: " + log.string() + ", kept with HART_ET_SYSEMU_DIR)"
                                             : ": " + summary.first_error));
  }
  const auto* status = reinterpret_cast<const et_minion_status*>(raw.data());
  uint64_t insns = 0;
  bool all_done = true;
  for (uint32_t h = 0; h < harts; h++) {
    if (!(r.shire_mask >> (h / ET_HARTS_PER_SHIRE) & 1)) continue;
    const et_minion_status& s = status[h];
    if (auto e = hart_status_error(s); e && !out.error) out.error = "kernel " + r.name + ": " + *e;
    all_done = all_done && s.state == ET_MINION_DONE;
    out.counters.push_back(s.counters);
    insns += s.insns;
  }
  out.sim_insns = insns;
  if (out.error) return out;
  if (rc != 0 || !all_done || !summary.first_error.empty()) {
    return fail("sys_emu exited with " + std::to_string(rc) + ": " +
                (summary.first_error.empty() ? "not every hart finished" : summary.first_error));
  }
  return out;
}

}  // namespace

std::string sysemu_path() {
  if (const char* p = std::getenv("HART_ET_SYSEMU")) return existing(p, "HART_ET_SYSEMU: the simulator");
  if (const char* root = std::getenv("ET_PLATFORM")) {
    return existing(std::string(root) + "/bin/sys_emu", "ET_PLATFORM: the simulator");
  }
  return existing(HART_ET_BUILT_SYSEMU, "the simulator (run scripts/build-sysemu, or set HART_ET_SYSEMU)");
}

std::string minion_elf_path() {
  if (const char* p = std::getenv("HART_ET_MINION_ELF")) return existing(p, "HART_ET_MINION_ELF: the minion program");
  return existing(HART_ET_MINION_ELF, "the minion program (built with the ET device kernels)");
}

std::unique_ptr<emu::EmuDevice> open_sysemu(emu::EmuConfig emu, SysemuConfig config) {
  if (emu.shires > ET_MINION_MAX_SHIRES) {
    throw Error("et-sysemu: at most " + std::to_string(ET_MINION_MAX_SHIRES) + " compute shires, not " + std::to_string(emu.shires));
  }
  if (emu.memory_bytes > (16ull << 30) - (ET_MINION_HEAP - ET_MINION_ENTRY)) {
    throw Error("et-sysemu: device memory past the simulated 16 GiB of DRAM");
  }
  if (config.sys_emu.empty()) config.sys_emu = sysemu_path();
  if (config.minion_elf.empty()) config.minion_elf = minion_elf_path();
  if (config.max_cycles == 0) {
    const char* v = std::getenv("HART_ET_SYSEMU_MAX_CYCLES");
    char* endp = nullptr;
    config.max_cycles = v ? std::strtoull(v, &endp, 10) : 2000000000ull;
    if (v && (endp == v || *endp || config.max_cycles == 0)) {
      throw Error(std::string("HART_ET_SYSEMU_MAX_CYCLES: '") + v + "' is not a positive cycle count");
    }
  }
  if (const char* dir = std::getenv("HART_ET_SYSEMU_DIR"); dir && config.work_dir.empty()) config.work_dir = dir;
  if (const char* check = std::getenv("HART_ET_SYSEMU_MEM_CHECK")) config.mem_check = std::strcmp(check, "0") != 0;
  emu.memory_base = ET_MINION_HEAP;
  return emu::open_emulated_device(emu, std::make_unique<SysemuRunner>(std::move(config)));
}

}  // namespace hart::et::sysemu
