#include "backend/et/et_trace.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace hart::et {

namespace {

const char* kind_name(ProfileRecord::Kind k) {
  switch (k) {
    case ProfileRecord::Kind::Launch: return "launch";
    case ProfileRecord::Kind::CopyH2D: return "memcpy_h2d";
    case ProfileRecord::Kind::CopyD2H: return "memcpy_d2h";
    case ProfileRecord::Kind::Wait: return "wait";
  }
  return "?";
}

constexpr int kHostTrack = 1, kDeviceTrack = 2;

}  // namespace

void Trace::add(const std::vector<ProfileRecord>& recs, double host_origin_us, double device_origin_us,
                const std::vector<TraceLaunch>& launches) {
  size_t launch = 0;
  for (const ProfileRecord& r : recs) {
    const bool is_launch = r.kind == ProfileRecord::Kind::Launch;
    const TraceLaunch* l = is_launch && launch < launches.size() ? &launches[launch++] : nullptr;
    const std::string name = l ? l->label : kind_name(r.kind);
    nlohmann::json args = {{"stream", r.stream}, {"failed", r.failed}};
    if (is_launch) {
      args["kernel"] = r.name;
      args["shire_mask"] = r.shire_mask;
      args["flops"] = r.flops;
      args["bytes_read"] = r.bytes_read;
      args["bytes_written"] = r.bytes_written;
      args["device_us"] = r.device_s * 1e6;
      args["phases"] = r.phases.size();
      if (l) args["tensors"] = l->tensors;
    } else {
      args["bytes"] = r.bytes;
    }
    nlohmann::json host = {{"name", name},        {"cat", kind_name(r.kind)}, {"ph", "X"},
                           {"ts", host_origin_us + r.host_start_s * 1e6},
                           {"dur", (r.host_end_s - r.host_start_s) * 1e6},
                           {"pid", 1},            {"tid", kHostTrack},       {"args", args}};
    events_.push_back(host.dump());
    if (r.kind == ProfileRecord::Kind::Wait) continue;
    const double dev_start = device_origin_us + r.device_start_s * 1e6;
    nlohmann::json dev = {{"name", name}, {"cat", kind_name(r.kind)}, {"ph", "X"}, {"ts", dev_start},
                          {"dur", r.device_s * 1e6}, {"pid", 1}, {"tid", kDeviceTrack}};
    if (l && l->tensors.size() == 1) dev["args"] = {{"tensor", l->tensors[0]}};
    events_.push_back(dev.dump());
    // An uberkernel's calls, nested under its launch, one after another by their share of it.
    double at = dev_start;
    for (size_t i = 0; l && l->tensors.size() > 1 && i < l->device_s.size(); i++) {
      const double dur = l->device_s[i] * 1e6;
      nlohmann::json sub = {{"name", l->tensors[i]}, {"cat", "kernel"}, {"ph", "X"}, {"ts", at}, {"dur", dur},
                            {"pid", 1}, {"tid", kDeviceTrack}, {"args", {{"kernel", l->kernels[i]}}}};
      events_.push_back(sub.dump());
      at += dur;
    }
  }
}

void Trace::write() const {
  std::filesystem::create_directories(dir_);
  const std::string trace_path = dir_ + "/et_runtime_trace.json";
  std::ofstream trace(trace_path);
  trace << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  auto track = [](int tid, const char* name) {
    return nlohmann::json{{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}}
        .dump();
  };
  trace << track(kHostTrack, "host (measured)") << ",\n" << track(kDeviceTrack, "device (modelled)");
  for (const std::string& e : events_) trace << ",\n" << e;
  trace << "\n]}\n";
  if (!trace) throw Error("cannot write " + trace_path);

  nlohmann::json ids = nlohmann::json::object();
  uint32_t id = 0;
#define ET_KERNEL_ENTRY(name) ids[#name] = id++;
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
  const std::string ids_path = dir_ + "/kernel_id.json";
  std::ofstream out(ids_path);
  out << ids.dump(2) << "\n";
  if (!out) throw Error("cannot write " + ids_path);
}

}  // namespace hart::et
