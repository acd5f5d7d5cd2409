// Fill functions of the x86 kernel sets. Each is compiled for its ISA: call it only after
// cpu_features() says the CPU has that ISA.
#pragma once

#include "backend/cpu/kernels.h"

namespace hart::cpu::x86 {

void fill_avx2(Kernels& k);         // AVX2 + FMA + F16C
void fill_avx512(Kernels& k);       // AVX-512 F/BW/VL/DQ
void fill_avx2_vnni(Kernels& k);    // AVX2 + AVX-VNNI (the VEX vpdpbusd, 256-bit)
void fill_avx512_vnni(Kernels& k);  // AVX-512 + VNNI (vpdpbusd)
void fill_avx512_bf16(Kernels& k);  // AVX-512 + VNNI + BF16 (vdpbf16ps)
void fill_amx(Kernels& k);          // avx512_bf16 + AMX-INT8 tiles for prefill

}  // namespace hart::cpu::x86
