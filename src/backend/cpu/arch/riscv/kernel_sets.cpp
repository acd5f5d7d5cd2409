// The RISC-V kernel sets, best last. This file is compiled with the build's baseline -march
// (possibly rv64gc) and never touches the vector unit: the fill functions it calls live in RVV
// translation units and run only after the feature check passed.
#include "backend/cpu/arch/riscv/cpu_features.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/kernels.h"

namespace hart::cpu {
namespace {

void fill_rvv(Kernels& k) {
  riscv::fill_rvv_rows(k);
  riscv::fill_rvv_q8(k);
  riscv::fill_rvv_q4(k);
  riscv::fill_rvv_k(k);
  riscv::fill_rvv_bf16(k);
  riscv::fill_rvv_panels_bf16(k);
  riscv::fill_rvv_panels_q(k);
}

void fill_rvv_zvfh(Kernels& k) {
  fill_rvv(k);
  riscv::fill_rvv_f16(k);
  riscv::fill_rvv_panels_f16(k);
  riscv::fill_rvv_panels_q_zvfh(k);
}

}  // namespace

std::vector<ArchKernelSet> arch_kernel_sets() {
  return {
      {"rvv", riscv::has_v, fill_rvv},
      {"rvv_zvfh", [] { return riscv::has_v() && riscv::has_zvfh(); }, fill_rvv_zvfh},
  };
}

}  // namespace hart::cpu
