#include "backend/cpu/arch/x86/cpu_features.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace hart::cpu::x86 {
namespace {

struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return Regs{};
  return r;
}

// XCR0 via the raw instruction: the _xgetbv intrinsic would need -mxsave on this file.
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

// Linux keeps AMX's 8 KB of tile data out of a process's signal frames until it asks for it
// (arch/x86/include/uapi/asm/prctl.h: ARCH_REQ_XCOMP_PERM; XFEATURE_XTILEDATA is state
// component 18). Granted once, it holds for every thread of the process.
bool request_tile_data() {
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

CpuFeatures detect() {
  CpuFeatures f;
  const Regs l1 = cpuid(1, 0);
  if (!bit(l1.ecx, 27)) return f;  // no OSXSAVE: the OS manages no vector state beyond SSE
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     // XMM + YMM state
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;   // + opmask, ZMM_Hi256, Hi16_ZMM
  const Regs l7 = cpuid(7, 0);
  const bool fma = bit(l1.ecx, 12), avx = bit(l1.ecx, 28), f16c = bit(l1.ecx, 29);
  f.avx2 = os_ymm && avx && fma && f16c && bit(l7.ebx, 5);
  const bool f512 = bit(l7.ebx, 16), dq = bit(l7.ebx, 17), bw = bit(l7.ebx, 30), vl = bit(l7.ebx, 31);
  f.avx512 = f.avx2 && os_zmm && f512 && dq && bw && vl;
  const Regs l7s1 = l7.eax >= 1 ? cpuid(7, 1) : Regs{};  // leaf 7's EAX: its last subleaf
  f.avx2_vnni = f.avx2 && bit(l7s1.eax, 4);
  f.avx512_vnni = f.avx512 && bit(l7.ecx, 11);
  f.avx512_bf16 = f.avx512_vnni && bit(l7s1.eax, 5);
  const bool os_tiles = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA state
  f.amx = f.avx512_bf16 && os_tiles && bit(l7.edx, 24) && bit(l7.edx, 25) && request_tile_data();
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace hart::cpu::x86
