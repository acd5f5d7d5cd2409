// The device kernels compiled into the emulator (device/kernels.def), by name.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "backend/et/device/et_device.h"

namespace hart::et::emu {

const std::vector<std::pair<std::string_view, et_kernel_fn>>& builtin_kernels();

}  // namespace hart::et::emu
