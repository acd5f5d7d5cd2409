// The order of a part's device calls in an uberkernel, and where its harts wait for each other.
// A launch barrier costs every hart the slowest one's time (the cost model: the phase's work plus
// ~1 us), so sub-kernels on disjoint memory share a phase: each call goes into the phase right
// after the last one holding a call it conflicts with (one reads bytes the other writes, or both
// write the same bytes), and the calls run phase by phase, in their graph order within a phase.
// A Qwen3 decode layer then takes 11 phases instead of 20 (with EtBackend::reuse_after and the
// fusions it allows): the Q, K and V products together, the Q and K norms and the V cache write
// together, both RoPEs together, the gate and up products together.
#pragma once

#include <vector>

#include "backend/et/device.h"

namespace hart::et {

struct ByteRange {
  DeviceAddr begin = 0, end = 0;  // [begin, end)
};

struct CallAccess {
  std::vector<ByteRange> reads, writes;
  bool alone = false;  // shares its phase with no other call (a kernel using the scratchpads)
};

// The phase of each call, 0 first. A call's phase is above that of every earlier call it
// conflicts with, so running the phases in order (and each phase's calls in any order) computes
// what running the calls in list order does.
std::vector<int> schedule_phases(const std::vector<CallAccess>& calls);

}  // namespace hart::et
