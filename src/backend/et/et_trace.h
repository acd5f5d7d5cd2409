// HART_ET_PROFILE=DIR: the device commands of every part as Chrome trace events
// (DIR/et_runtime_trace.json: launches, copies and waits on a host-time track, launches again on
// a modelled-device-time track; an uberkernel's sub-kernels there as events of their own, named by
// the graph tensor each computes) and the kernel ids of the device image (DIR/kernel_id.json).
#pragma once

#include <string>
#include <vector>

#include "backend/et/device.h"

namespace hart::et {

// What a launch computed: its label ("mul_mat_Q8_0xf32" or "uberkernel[12]") and, per kernel
// call, the kernel's label, the graph tensor it writes (the names of ET_PERF's tensor=) and its
// modelled device time (ET_PERF's device_us).
struct TraceLaunch {
  std::string label;
  std::vector<std::string> kernels, tensors;
  std::vector<double> device_s;
};

class Trace {
 public:
  explicit Trace(std::string dir) : dir_(std::move(dir)) {}
  // One part's records; host_origin_us is when its profiler started (steady clock, us),
  // device_origin_us where its device timeline begins. launches: the part's launches in order.
  void add(const std::vector<ProfileRecord>& recs, double host_origin_us, double device_origin_us,
           const std::vector<TraceLaunch>& launches);
  // Writes both files; throws hart::Error when they cannot be written.
  void write() const;

 private:
  std::string dir_;
  std::vector<std::string> events_;  // serialized JSON objects
};

}  // namespace hart::et
