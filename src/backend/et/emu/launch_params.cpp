#include "backend/et/emu/launch_params.h"

#include <cstring>
#include <string>

#include "backend/et/device/et_params.h"
#include "common/error.h"

namespace hart::et::emu {

namespace {

constexpr size_t params_struct_bytes(uint32_t id) {
  switch (id) {
    case ET_KERNEL_ID_mul_mat: return sizeof(et_mul_mat_params);
    case ET_KERNEL_ID_rms_norm: return sizeof(et_rms_norm_params);
    case ET_KERNEL_ID_binary: return sizeof(et_binary_params);
    case ET_KERNEL_ID_scale: return sizeof(et_scale_params);
    case ET_KERNEL_ID_get_rows: return sizeof(et_get_rows_params);
    case ET_KERNEL_ID_set_rows: return sizeof(et_set_rows_params);
    case ET_KERNEL_ID_rope: return sizeof(et_rope_params);
    case ET_KERNEL_ID_soft_max: return sizeof(et_soft_max_params);
    case ET_KERNEL_ID_glu: return sizeof(et_glu_params);
    case ET_KERNEL_ID_cpy: return sizeof(et_cpy_params);
    case ET_KERNEL_ID_flash_attn_ext: return sizeof(et_flash_attn_params);
    case ET_KERNEL_ID_uberkernel: return sizeof(et_uber_params);
    default: return 0;
  }
}

constexpr bool every_kernel_has_a_size() {
  for (uint32_t id = 0; id < ET_KERNEL_COUNT; id++) {
    if (params_struct_bytes(id) == 0) return false;
  }
  return true;
}
static_assert(every_kernel_has_a_size(), "a kernel of kernels.def lacks its parameter block here");

const char* kernel_name(uint32_t id) {
  static const char* const kNames[] = {
#define ET_KERNEL_ENTRY(name) #name,
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
  };
  return kNames[id];
}

void check_uberkernel(const uint8_t* block, size_t bytes) {
  et_uber_params u;
  std::memcpy(&u, block, sizeof u);
  const uint64_t list_end = sizeof u + uint64_t(u.count) * sizeof(et_uber_op);
  if (list_end > bytes) {
    throw Error("uberkernel: " + std::to_string(u.count) + " ops do not fit its " + std::to_string(bytes) +
                "-byte parameter block");
  }
  for (uint32_t i = 0; i < u.count; i++) {
    et_uber_op op;
    std::memcpy(&op, block + sizeof u + i * sizeof op, sizeof op);
    const std::string at = "uberkernel op " + std::to_string(i) + ": ";
    if (op.kernel_id >= ET_KERNEL_COUNT || op.kernel_id == ET_KERNEL_ID_uberkernel) {
      throw Error(at + "kernel id " + std::to_string(op.kernel_id) + " is not a sub-kernel");
    }
    if (op.params_offset % 8 != 0 || op.params_offset < list_end ||
        uint64_t(op.params_offset) + params_struct_bytes(op.kernel_id) > bytes) {
      throw Error(at + kernel_name(op.kernel_id) + " parameters at offset " + std::to_string(op.params_offset) +
                  " are misaligned or outside the block after the op list");
    }
  }
}

}  // namespace

size_t launch_params_bytes(uint32_t kernel_id) {
  if (kernel_id >= ET_KERNEL_COUNT) throw Error("no built-in kernel with id " + std::to_string(kernel_id));
  return params_struct_bytes(kernel_id);
}

void check_launch_params(uint32_t kernel_id, const void* params, size_t bytes) {
  const size_t need = launch_params_bytes(kernel_id);
  if (bytes < need || (need > 0 && params == nullptr)) {
    throw Error(std::string("launch of ") + kernel_name(kernel_id) + ": parameter block of " + std::to_string(bytes) +
                " bytes, expected at least " + std::to_string(need));
  }
  if (kernel_id == ET_KERNEL_ID_uberkernel) check_uberkernel(static_cast<const uint8_t*>(params), bytes);
}

}  // namespace hart::et::emu
