#include "backend/et/cost_model.h"

#include <algorithm>

namespace hart::et {

double CostModel::work_seconds(const std::vector<et_counters>& counters) const {
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

namespace {

et_counters minus(const et_counters& a, const et_counters& b) {
  return {a.flops - b.flops, a.bytes_read - b.bytes_read, a.bytes_written - b.bytes_written,
          a.tensor_flops - b.tensor_flops, a.tensor_cycles - b.tensor_cycles};
}

}  // namespace

std::vector<ProfileRecord::SubKernel> CostModel::sub_kernels(const std::vector<std::vector<et_counters>>& seams,
                                                         const std::vector<et_counters>& final_counters) const {
  size_t n_seams = seams.empty() ? 0 : seams[0].size();
  for (const auto& s : seams) n_seams = std::min(n_seams, s.size());  // a failed hart stops early
  std::vector<ProfileRecord::SubKernel> out;
  std::vector<et_counters> delta(final_counters.size());
  for (size_t k = 0; k <= n_seams; k++) {
    ProfileRecord::SubKernel sk;
    for (size_t h = 0; h < final_counters.size(); h++) {
      const et_counters& end = k < n_seams ? seams[h][k] : final_counters[h];
      delta[h] = k > 0 ? minus(end, seams[h][k - 1]) : end;
      sk.flops += delta[h].flops;
      sk.bytes += delta[h].bytes_read + delta[h].bytes_written;
    }
    sk.work_s = work_seconds(delta);
    out.push_back(sk);
  }
  return out;
}

std::vector<double> CostModel::phase_seconds(const std::vector<std::vector<et_counters>>& at_barriers,
                                             const std::vector<et_counters>& final_counters) const {
  std::vector<double> out;
  std::vector<et_counters> prev(final_counters.size()), delta(final_counters.size());
  for (size_t p = 0; p <= at_barriers.size(); p++) {
    const std::vector<et_counters>& now = p < at_barriers.size() ? at_barriers[p] : final_counters;
    for (size_t h = 0; h < now.size(); h++) delta[h] = minus(now[h], prev[h]);
    out.push_back(work_seconds(delta) + (p < at_barriers.size() ? launch_barrier_s : 0.0));
    prev = now;
  }
  return out;
}

}  // namespace hart::et
