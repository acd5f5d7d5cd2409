// Fill functions of the RISC-V kernel sets, one per kernel family. Their translation units are
// compiled with -march=rv64gcv (rvv_f16.cpp: rv64gcv_zvfh) whatever the build's baseline: call
// them only after cpu_features() says the core has what they need.
#pragma once

#include "backend/cpu/kernels.h"

namespace hart::cpu::riscv {

void fill_rvv_rows(Kernels& k);  // F32 row primitives
void fill_rvv_q8(Kernels& k);    // Q8_0 weights, Q8_0 / Q8_1 activation quantizers
void fill_rvv_q4(Kernels& k);    // Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 weights
void fill_rvv_k(Kernels& k);     // Q2_K..Q6_K, IQ4_XS, TQ1_0, TQ2_0, IQ1-IQ3 weights, Q8_K activation quantizer
void fill_rvv_bf16(Kernels& k);  // BF16 weights (integer widening, no Zvfbf*)
void fill_rvv_f16(Kernels& k);   // F16 weights (Zvfh widening), F16 row converter
void fill_rvv_panels_bf16(Kernels& k);  // BF16 weights in 32-row panels (repack.h)
void fill_rvv_panels_f16(Kernels& k);   // F16 weights in 32-row panels (Zvfh)
void fill_rvv_panels_q(Kernels& k);       // Q8_0, Q4_0 weights in 32-row byte panels
void fill_rvv_panels_q_zvfh(Kernels& k);  // the same, scales widened with Zvfh

}  // namespace hart::cpu::riscv
