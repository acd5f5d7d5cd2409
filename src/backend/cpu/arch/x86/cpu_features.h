// What the running x86-64 CPU and OS support, read once with cpuid + xgetbv. A feature counts
// only when the OS also saves the registers it needs (XCR0), so a set is never chosen on a
// kernel that would fault on its first vector instruction.
#pragma once

namespace hart::cpu::x86 {

struct CpuFeatures {
  bool avx2 = false;    // AVX2 + FMA + F16C, with YMM state enabled by the OS
  bool avx512 = false;  // AVX-512 F/BW/VL/DQ, with ZMM/opmask state enabled by the OS
  bool avx2_vnni = false;    // AVX2 + AVX-VNNI (VEX-encoded vpdpbusd)
  bool avx512_vnni = false;  // AVX-512 + VNNI
  bool avx512_bf16 = false;  // AVX-512 + VNNI + BF16
  // avx512_bf16 + AMX-TILE + AMX-INT8, with tile state enabled by the OS and this process granted
  // the right to use it (Linux asks each process to request it: arch_prctl ARCH_REQ_XCOMP_PERM)
  bool amx = false;
};

const CpuFeatures& cpu_features();

}  // namespace hart::cpu::x86
