#include "backend/et/cost_model.h"

#include <algorithm>

namespace hart::et {

double CostModel::launch_seconds(const std::vector<et_counters>& counters) const {
  uint64_t busiest = 0, traffic = 0;
  for (size_t i = 0; i < counters.size(); i += ET_HARTS_PER_MINION) {
    uint64_t minion = 0;
    for (size_t h = i; h < std::min(counters.size(), i + ET_HARTS_PER_MINION); h++) {
      minion += counters[h].flops;
      traffic += counters[h].bytes_read + counters[h].bytes_written;
    }
    busiest = std::max(busiest, minion);
  }
  const double compute = double(busiest) / (double(vector_lanes) * flops_per_lane_cycle * clock_hz);
  const double memory = double(traffic) / dram_bytes_per_s;
  return std::max(compute, memory) + launch_overhead_s;
}

}  // namespace hart::et
