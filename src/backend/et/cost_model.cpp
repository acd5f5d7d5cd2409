#include "backend/et/cost_model.h"

#include <algorithm>

namespace hart::et {

double CostModel::work_seconds(const std::vector<et_counters>& counters) const {
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
  return std::max(compute, memory);
}

std::vector<double> CostModel::phase_seconds(const std::vector<std::vector<et_counters>>& at_barriers,
                                             const std::vector<et_counters>& final_counters) const {
  std::vector<double> out;
  std::vector<et_counters> prev(final_counters.size()), delta(final_counters.size());
  for (size_t p = 0; p <= at_barriers.size(); p++) {
    const std::vector<et_counters>& now = p < at_barriers.size() ? at_barriers[p] : final_counters;
    for (size_t h = 0; h < now.size(); h++) {
      delta[h] = {now[h].flops - prev[h].flops, now[h].bytes_read - prev[h].bytes_read,
                  now[h].bytes_written - prev[h].bytes_written};
    }
    out.push_back(work_seconds(delta) + (p < at_barriers.size() ? launch_barrier_s : 0.0));
    prev = now;
  }
  return out;
}

}  // namespace hart::et
