// Fill functions of the RISC-V kernel sets. Their translation units are compiled with
// -march=rv64gcv (rvv_zvfh: rv64gcv_zvfh) whatever the build's baseline: call a fill function only
// after cpu_features() says the core has what it needs.
#pragma once

#include "backend/cpu/kernels.h"

namespace hart::cpu::riscv {

void fill_rvv(Kernels& k);       // RVV 1.0: F32 rows, integer dots, BF16
void fill_rvv_zvfh(Kernels& k);  // fill_rvv + F16 weights with Zvfh arithmetic

}  // namespace hart::cpu::riscv
