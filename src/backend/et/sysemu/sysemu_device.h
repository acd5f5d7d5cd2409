// The et-sysemu device: the emulated device's memory, streams and cost model (emu/emulator.h)
// with every launch run by the vendor's simulator, sw-sysemu's sys_emu, on the kernels built as
// a minion program (minion/et_minion.h): one sys_emu process per launch, loaded with the program,
// the launch block, the parameters and the device memory image, which is dumped back after.
#pragma once

#include <memory>
#include <string>

#include "backend/et/emu/emulator.h"

namespace hart::et::sysemu {

struct SysemuConfig {
  std::string sys_emu;      // the simulator; "" = found as sysemu_path() says
  std::string minion_elf;   // the kernels' program; "" = HART_ET_MINION_ELF, else the build's
  uint64_t max_cycles = 0;  // a launch past this many cycles fails; 0 = HART_ET_SYSEMU_MAX_CYCLES, else 2e9
  bool mem_check = true;    // sys_emu -mem_check (unless HART_ET_SYSEMU_MEM_CHECK=0): two minions writing one line, or a stale read, fail the launch
  std::string work_dir;     // per-launch files (kept); "" = HART_ET_SYSEMU_DIR, else a fresh directory under $TMPDIR, removed at close
};

// HART_ET_SYSEMU, else $ET_PLATFORM/bin/sys_emu, else the one scripts/build-sysemu built for this
// tree; throws hart::Error (one line, naming the path) when the chosen one does not exist.
std::string sysemu_path();
// HART_ET_MINION_ELF, else the program this build made; throws when it does not exist.
std::string minion_elf_path();

// The device (32 shires unless emu.shires says fewer); its memory starts at ET_MINION_HEAP.
std::unique_ptr<emu::EmuDevice> open_sysemu(emu::EmuConfig emu, SysemuConfig config = {});

}  // namespace hart::et::sysemu
