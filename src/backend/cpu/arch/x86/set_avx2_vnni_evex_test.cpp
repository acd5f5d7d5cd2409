// Test twin of the "avx2_vnni" set (sets_under_test.h): the same sources and switches, with the
// 256-bit vpdpbusd EVEX-encoded (AVX512-VNNI + VL) instead of VEX (AVX-VNNI). AVX-512 VNNI CPUs,
// which mostly lack AVX-VNNI (as does QEMU 7.2), thus run every avx2_vnni kernel path.
#include "backend/cpu/arch/x86/target.h"  // first: its diagnostics apply to immintrin.h

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/arch/x86/cpu_features.h"
#include "backend/cpu/sets_under_test.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/repack.h"
#include "quant/blocks.h"
#include "quant/iq_levels.h"

#define HART_X86_WIDE 0
#define HART_X86_SET_FILL fill_avx2_vnni_evex
#define HART_X86_VNNI 1
#define HART_X86_AVX_VNNI 0

namespace hart::cpu::x86 {
void fill_avx2_vnni_evex(Kernels& k);
}

HART_X86_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")

#include "backend/cpu/arch/x86/set_body.inc"

HART_X86_TARGET_END

namespace hart::cpu {

std::vector<ArchKernelSet> arch_test_twins() {
  return {{"avx2_vnni_evex", [] { return x86::cpu_features().avx512_vnni; }, x86::fill_avx2_vnni_evex}};
}

}  // namespace hart::cpu
