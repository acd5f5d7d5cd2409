// The kernel sets the CPU tests hold to the reference: every set this binary can run here
// (available_kernels()) plus the arch's test twins this CPU can run. A twin is a set compiled
// from the same sources with an instruction encoding the machine has, for a set whose own
// encoding it may lack (arch/x86/set_avx2_vnni_evex_test.cpp). Test sources only.
#pragma once

#include <vector>

#include "backend/cpu/kernels.h"

namespace hart::cpu {

// Defined once per arch in a test source (arch/no_test_twins.cpp where there are none).
std::vector<ArchKernelSet> arch_test_twins();

std::vector<const Kernels*> sets_under_test();

}  // namespace hart::cpu
