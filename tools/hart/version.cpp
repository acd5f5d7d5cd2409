#include "version.h"

#include <cstdio>
#include <string>

#include "backend/cpu/kernels.h"
#include "build_info.h"

namespace hart::cli {

void print_version() {
  const BuildInfo& b = build_info();
  const std::string& chosen = cpu::kernels().name;
  std::string runnable;
  for (const cpu::Kernels* k : cpu::available_kernels()) runnable += (runnable.empty() ? "" : ", ") + k->name;
  std::printf("hart %s (%s)\n", b.version, b.revision);
  std::printf("built with %s, flags: %s\n", b.compiler, b.flags);
  std::printf("CPU kernels: %s (this CPU runs: %s; HART_ISA=NAME picks one)\n", chosen.c_str(), runnable.c_str());
}

}  // namespace hart::cli
