#include "backend/et/cost_model.h"

#include <algorithm>

namespace hart::et {

double CostModel::work_seconds(const std::vector<et_counters>& counters) const {
  const double vector_flops_per_cycle = double(vector_lanes) * flops_per_lane_cycle;
  double busiest = 0;  // cycles
  uint64_t traffic = 0;
  for (size_t i = 0; i < counters.size(); i += ET_HARTS_PER_MINION) {
    uint64_t vector_flops = 0, engine_cycles = 0;
    for (size_t h = i; h < std::min(counters.size(), i + ET_HARTS_PER_MINION); h++) {
      vector_flops += counters[h].flops - counters[h].tensor_flops;
      engine_cycles += counters[h].tensor_cycles;
      traffic += counters[h].bytes_read + counters[h].bytes_written;
    }
    busiest = std::max({busiest, double(vector_flops) / vector_flops_per_cycle, double(engine_cycles)});
  }
  const double compute = busiest / clock_hz;
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
                  now[h].bytes_written - prev[h].bytes_written, now[h].tensor_flops - prev[h].tensor_flops,
                  now[h].tensor_cycles - prev[h].tensor_cycles};
    }
    out.push_back(work_seconds(delta) + (p < at_barriers.size() ? launch_barrier_s : 0.0));
    prev = now;
  }
  return out;
}

}  // namespace hart::et
