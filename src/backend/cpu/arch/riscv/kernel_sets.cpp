// The RISC-V kernel sets. This file is compiled with the build's baseline -march (possibly rv64gc)
// and must not touch the vector unit: the fill functions it names live in RVV translation units
// compiled with -march=rv64gcv[_zvfh] and are only called after the run-time check passed.
#include "backend/cpu/arch/riscv/cpu_features.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/kernels.h"

namespace hart::cpu {

std::vector<ArchKernelSet> arch_kernel_sets() {
  return {
      {"rvv", riscv::has_v, riscv::fill_rvv},
      {"rvv_zvfh", [] { return riscv::has_v() && riscv::has_zvfh(); }, riscv::fill_rvv_zvfh},
  };
}

}  // namespace hart::cpu
