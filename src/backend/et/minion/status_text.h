// A hart's status slot (et_minion.h) in words: its failure as the built-in emulator words it
// (emu/harts.cpp), for the devices that run the kernels on the chip's runtimes (sysemu/, rt/).
#pragma once

#include <optional>
#include <string>

#include "backend/et/minion/et_minion.h"

namespace hart::et {

// The failure the slot records, or nullopt (done, not run, or left because another hart failed).
std::optional<std::string> hart_status_error(const et_minion_status& s);

}  // namespace hart::et
