#include "backend/cpu/arch/riscv/cpu_features.h"

#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace hart::cpu::riscv {
namespace {

// Linux uapi <asm/hwprobe.h> and <asm/unistd.h> (absent from Debian 12's cross headers).
constexpr long kSysRiscvHwprobe = 258;
constexpr int64_t kHwprobeKeyImaExt0 = 4;
constexpr uint64_t kHwprobeImaV = 1ull << 2;
constexpr uint64_t kHwprobeExtZvfh = 1ull << 30;

struct HwprobePair {
  int64_t key;
  uint64_t value;
};

std::optional<uint64_t> hwprobe_ima_ext0() {
  HwprobePair pair{kHwprobeKeyImaExt0, 0};
  // All online CPUs (cpusetsize 0, cpus NULL): boolean keys are ANDed over them. A kernel that
  // does not know the key sets it to -1.
  if (syscall(kSysRiscvHwprobe, &pair, 1, 0, nullptr, 0) != 0 || pair.key != kHwprobeKeyImaExt0)
    return std::nullopt;
  return pair.value;
}

}  // namespace

CpuFeatures decode_features(uint64_t hwcap, std::optional<uint64_t> hwprobe_ext0,
                            const char* zvfh_override) {
  CpuFeatures f;
  f.v = (hwcap >> ('V' - 'A')) & 1;
  if (hwprobe_ext0) {
    f.v = f.v && (*hwprobe_ext0 & kHwprobeImaV);
    f.zvfh = f.v && (*hwprobe_ext0 & kHwprobeExtZvfh);
  } else if (zvfh_override != nullptr && *zvfh_override != '\0') {
    if (std::strcmp(zvfh_override, "1") != 0 && std::strcmp(zvfh_override, "0") != 0)
      throw Error(std::string("HART_RISCV_ZVFH must be 0 or 1, got '") + zvfh_override + "'");
    f.zvfh = f.v && zvfh_override[0] == '1';
  }
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features =
      decode_features(getauxval(AT_HWCAP), hwprobe_ima_ext0(), std::getenv("HART_RISCV_ZVFH"));
  return features;
}

}  // namespace hart::cpu::riscv
