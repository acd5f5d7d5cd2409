// The x86-64 kernel sets, best last. Each set's kernels live in their own translation unit
// compiled for that ISA with target pragmas (set_<name>.cpp),
// so this file and everything it calls before the cpuid check stay baseline x86-64.
#include "backend/cpu/arch/x86/cpu_features.h"
#include "backend/cpu/arch/x86/sets.h"
#include "backend/cpu/kernels.h"

namespace hart::cpu {

std::vector<ArchKernelSet> arch_kernel_sets() {
  return {
      {"avx2", [] { return x86::cpu_features().avx2; }, x86::fill_avx2},
      {"avx2_vnni", [] { return x86::cpu_features().avx2_vnni; }, x86::fill_avx2_vnni},
      {"avx512", [] { return x86::cpu_features().avx512; }, x86::fill_avx512},
      {"avx512_vnni", [] { return x86::cpu_features().avx512_vnni; }, x86::fill_avx512_vnni},
      {"avx512_bf16", [] { return x86::cpu_features().avx512_bf16; }, x86::fill_avx512_bf16},
      {"amx", [] { return x86::cpu_features().amx; }, x86::fill_amx},
  };
}

}  // namespace hart::cpu
