// The et-rt device: et::Device over the ET runtime (esperanto-tools-libs' rt::IRuntime), on an
// ET-SoC-1 card (the PCIe device layer, /dev/et0_mgmt + /dev/et0_ops) or on the vendor's
// simulator behind the same runtime (the sysemu device layer, which boots the SP and Master
// Minion firmware). Device memory is the runtime's (mallocDevice); copies are its DMA commands;
// each kernel is its own ELF in the runtime's kernel format (et_rt.h), loaded with loadCode on
// its first launch and launched with kernelLaunch on the shire mask. Built with
// -DHART_ET_PLATFORM=PREFIX only (docs/et.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/et/cost_model.h"
#include "backend/et/device.h"

namespace hart::et::etrt {

struct RtConfig {
  enum class Layer { Pcie, Sysemu };
  Layer layer = Layer::Pcie;
  std::string platform;     // where the firmware and sys_emu are (sysemu): ET_TOOLCHAIN, TOOLCHAIN_ROOT, else /opt/et
  std::string kernel_dir;   // the kernels' ELFs: HART_ET_RT_KERNELS, else the ones this build made
  std::string run_dir;      // sysemu's logs (kept): HART_ET_RT_DIR, else a fresh directory removed at close
  uint64_t max_cycles = ~0ull;          // sysemu: HART_ET_SYSEMU_MAX_CYCLES
  bool mem_check = true;                // sysemu's memory checker unless HART_ET_SYSEMU_MEM_CHECK=0
  unsigned timeout_s = 600;             // a command not done by then fails: HART_ET_RT_TIMEOUT
  CostModel cost;                       // the launches' modelled device time (device_s)

  // From the environment: the layer is sysemu when HART_ET_RT_LAYER=sysemu or the seed's
  // GGML_ET_SYSEMU is set (not 0/OFF), the card otherwise (HART_ET_RT_LAYER=pcie).
  static RtConfig from_env();
};

// The five firmware ELFs and sys_emu under platform, as llama.cpp's ET backend names them; throws
// hart::Error naming the first that is missing or empty (the simulator hangs silently without).
struct SysemuFiles {
  std::string bootrom, sp_bl2, machine_minion, master_minion, worker_minion, sys_emu;
};
SysemuFiles sysemu_files(const std::string& platform);

// Starts the runtime on the configured layer (throws hart::Error, one line, when the card's
// device files, the firmware or the kernels are missing, or the runtime refuses to start).
std::unique_ptr<Device> open_rt(RtConfig config);

}  // namespace hart::et::etrt
