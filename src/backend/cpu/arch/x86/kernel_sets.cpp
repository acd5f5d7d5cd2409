// The x86-64 kernel sets, best last. Each set's kernels live in their own translation unit
// compiled for that ISA with target pragmas (set_avx2.cpp, set_avx512.cpp, set_avx512_vnni.cpp),
// so this file and everything it calls before the cpuid check stay baseline x86-64.
#include "backend/cpu/arch/x86/cpu_features.h"
#include "backend/cpu/arch/x86/sets.h"
#include "backend/cpu/kernels.h"

namespace hart::cpu {

std::vector<ArchKernelSet> arch_kernel_sets() {
  return {
      {"avx2", [] { return x86::cpu_features().avx2; }, x86::fill_avx2},
      {"avx512", [] { return x86::cpu_features().avx512; }, x86::fill_avx512},
      {"avx512_vnni", [] { return x86::cpu_features().avx512_vnni; }, x86::fill_avx512_vnni},
  };
}

}  // namespace hart::cpu
