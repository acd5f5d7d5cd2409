// What the running RISC-V core supports, read once: V from the ELF auxiliary vector (AT_HWCAP
// bit 'V' - 'A'), Zvfh from the riscv_hwprobe syscall (Linux 6.8+). A kernel without hwprobe
// (older Linux, qemu-user 7.2) reports no Zvfh unless HART_RISCV_ZVFH=1 declares it.
#pragma once

#include <cstdint>
#include <optional>

namespace hart::cpu::riscv {

struct CpuFeatures {
  bool v = false;     // RVV 1.0, enabled by the kernel
  bool zvfh = false;  // vector half-precision arithmetic (requires v)
};

const CpuFeatures& cpu_features();

// The parsing half of the detection, separated so tests can feed it any values.
// hwprobe_ext0: the RISCV_HWPROBE_KEY_IMA_EXT_0 value, nullopt when the syscall is unavailable.
// zvfh_override: the HART_RISCV_ZVFH environment variable (nullptr when unset), used only then.
CpuFeatures decode_features(uint64_t hwcap, std::optional<uint64_t> hwprobe_ext0,
                            const char* zvfh_override);

inline bool has_v() { return cpu_features().v; }
inline bool has_zvfh() { return cpu_features().zvfh; }

}  // namespace hart::cpu::riscv
