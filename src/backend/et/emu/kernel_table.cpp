#include "backend/et/emu/kernel_table.h"

extern "C" {
#define ET_KERNEL_ENTRY(name) ET_KERNEL(name);
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
}

namespace hart::et::emu {

const std::vector<std::pair<std::string_view, et_kernel_fn>>& builtin_kernels() {
  static const std::vector<std::pair<std::string_view, et_kernel_fn>> table = {
#define ET_KERNEL_ENTRY(name) {#name, &et_kernel_##name},
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
  };
  return table;
}

}  // namespace hart::et::emu
