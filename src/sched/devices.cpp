#include "sched/devices.h"

#include <algorithm>
#include <cctype>

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#ifdef HART_HAVE_ET
#include "backend/et/et_backend.h"
#endif

namespace hart::sched {

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
#ifdef HART_HAVE_ET
  out.push_back({"et", "ET-SoC-1 style accelerator (et0: functional emulator, 32 shires x 32 minions x 2 harts)"});
#endif
  out.push_back({"cpu", "host CPU (reference backend, supports every op)"});
  return out;
}

std::vector<std::string> parse_device_list(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& a : args) {
    size_t start = 0;
    while (start <= a.size()) {
      const size_t comma = std::min(a.find(',', start), a.size());
      std::string name = a.substr(start, comma - start);
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (!name.empty()) names.push_back(name);
      start = comma + 1;
    }
  }
  return names;
}

Devices::Devices(const std::vector<std::string>& names, int n_threads, const std::string& perf_log,
                 uint64_t cpu_mask) {
  if (!perf_log.empty()) log_ = std::make_unique<PerfLog>(perf_log);
  bool have_cpu = false;
  auto add_cpu = [&] {
    backends_.push_back(std::make_unique<cpu::CpuBackend>(n_threads, cpu_mask));
    have_cpu = true;
  };
  for (const std::string& n : names) {
    if (n == "cpu") {
      if (!have_cpu) add_cpu();
      continue;
    }
#ifdef HART_HAVE_ET
    if (n == "et" || n == "et0") {
      et::EtOptions opt = et::EtOptions::from_env();
      opt.perf_log = log_.get();
      backends_.push_back(et::open_et_backend(opt));
      continue;
    }
#endif
    std::string known;
    for (const DeviceInfo& d : list_devices()) {
      if (!known.empty()) known += ", ";
      known += d.name;
    }
    throw Error("unknown device '" + n + "' (known: " + known + ")");
  }
  // The CPU backend runs whatever the others do not support: it always comes last.
  if (have_cpu && backends_.size() > 1) {
    auto it = std::find_if(backends_.begin(), backends_.end(), [](const auto& b) { return b->name() == "CPU"; });
    std::rotate(it, it + 1, backends_.end());
  }
  if (!have_cpu) add_cpu();
  std::vector<Backend*> order;
  for (const auto& b : backends_) order.push_back(b.get());
  scheduler_ = std::make_unique<Scheduler>(order);
  scheduler_->set_perf_log(log_.get());
}

Devices::~Devices() = default;

Backend* Devices::find(const std::string& backend_name) const {
  for (const auto& b : backends_)
    if (b->name() == backend_name) return b.get();
  return nullptr;
}

}  // namespace hart::sched
