// CPUs without an arch folder (neither x86-64 nor riscv64) run the reference kernels only.
#include "backend/cpu/kernels.h"

namespace hart::cpu {

std::vector<ArchKernelSet> arch_kernel_sets() { return {}; }

}  // namespace hart::cpu
