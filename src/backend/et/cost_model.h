// Modelled device time of a launch or a copy. Defaults are ET-SoC-1's: 1 GHz minions whose two
// harts run the (scalar) vector kernels at the rate measured on sysemu, LPDDR4x at 16 x 16-bit
// channels x 4266 MT/s = 136.5 GB/s, PCIe Gen4 x8 to the host.
// Each minion's matrix engine (emu/tensor_unit.h) works beside the vector unit: a minion is busy
// for the longer of its harts' vector work and its engine's cycles (the engine kernels pack the
// next tile on one hart while the other drives the engine on this one).
// The per-launch overhead is an estimate of the SDK's op-to-op gap (not a published figure), the
// launch-barrier cost an estimate of one device-wide barrier (an uberkernel's seam).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/et/device.h"
#include "backend/et/device/et_device.h"

namespace hart::et {

struct CostModel {
  double clock_hz = 1e9;
  // A minion's vector-kernel flops per cycle (its two harts together), calibrated on sysemu: the
  // device kernels are scalar C (rv64imf, none of the 8-lane packed-single ops the unit's 16 flops
  // a cycle need), and on sysemu a decode step's Q8_0 mat-vec (rms_norm_mul_mul_mat, 91% of the
  // step's cycles) did 0.28 flops a minion-cycle (scripts/et-cost-vs-sysemu; docs/et.md). Was 16.
  double vector_flops_per_cycle = 0.28;
  double dram_bytes_per_s = 136.5e9;
  double host_link_bytes_per_s = 16e9;
  double launch_overhead_s = 10e-6;
  double launch_barrier_s = 1e-6;

  // max(compute, memory): compute is set by the busiest minion (its harts' vector flops, or its
  // engine's cycles when longer), memory by the total traffic. counters holds one entry per hart, two per minion, in order.
  double work_seconds(const std::vector<et_counters>& counters) const;
  // A launch: work + overhead.
  double launch_seconds(const std::vector<et_counters>& counters) const {
    return work_seconds(counters) + launch_overhead_s;
  }
  // A launch whose harts met at launch barriers, with the counters at each barrier: the device
  // time of each phase (work between barriers, plus a barrier for all but the last). The launch
  // takes their sum plus the overhead.
  std::vector<double> phase_seconds(const std::vector<std::vector<et_counters>>& at_barriers,
                                    const std::vector<et_counters>& final_counters) const;
  // An uberkernel's sub-kernels, from each hart's counters at the seams between them (per hart,
  // per seam) and at the end: each one's own work (as if it ran alone, without overhead) and
  // flops. Sub-kernels that ran between the same two barriers overlap: their phase takes less
  // than the sum of their work.
  std::vector<ProfileRecord::SubKernel> sub_kernels(const std::vector<std::vector<et_counters>>& seams,
                                     const std::vector<et_counters>& final_counters) const;
  double copy_seconds(uint64_t bytes) const { return double(bytes) / host_link_bytes_per_s; }
};

}  // namespace hart::et
