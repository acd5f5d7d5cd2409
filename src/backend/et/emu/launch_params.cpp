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
    case ET_KERNEL_ID_paged_attn: return sizeof(et_paged_attn_params);
    case ET_KERNEL_ID_unary: return sizeof(et_unary_params);
    case ET_KERNEL_ID_concat: return sizeof(et_concat_params);
    case ET_KERNEL_ID_ssm_conv: return sizeof(et_ssm_conv_params);
    case ET_KERNEL_ID_norm: return sizeof(et_norm_params);
    case ET_KERNEL_ID_sum_rows: return sizeof(et_sum_rows_params);
    case ET_KERNEL_ID_rwkv_wkv7: return sizeof(et_rwkv_wkv7_params);
    case ET_KERNEL_ID_top_k: return sizeof(et_top_k_params);
    case ET_KERNEL_ID_gated_delta_net: return sizeof(et_gated_delta_net_params);
    case ET_KERNEL_ID_mul_mat_f16_matrix_engine: case ET_KERNEL_ID_mul_mat_f32_matrix_engine:
    case ET_KERNEL_ID_mul_mat_q8_0_matrix_engine: case ET_KERNEL_ID_mul_mat_q4_0_matrix_engine:
      return sizeof(et_mul_mat_params);
    case ET_KERNEL_ID_flash_attn_ext_f16_me: return sizeof(et_flash_attn_params);
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

// Elements and strides a kernel can index with 64-bit arithmetic without overflow.
constexpr int64_t kMaxExtent = int64_t(1) << 32;
constexpr int64_t kMaxBytes = int64_t(1) << 40;
constexpr uint64_t kMaxAddress = uint64_t(1) << 48;  // the device's address space

// Alignment of an element (blocks start with an fp16 scale); 0 for types no kernel takes.
int64_t type_alignment(int32_t type) {
  switch (type) {
    case ET_TYPE_F32: case ET_TYPE_I32: return 4;
    case ET_TYPE_F16: case ET_TYPE_Q4_0: case ET_TYPE_Q4_1: case ET_TYPE_Q5_0: case ET_TYPE_Q5_1: case ET_TYPE_Q8_0:
    case ET_TYPE_Q4_K: case ET_TYPE_Q5_K: case ET_TYPE_Q6_K: case ET_TYPE_IQ4_NL: return 2;  // every block size is even
    case ET_TYPE_I64: return 8;
    default: return 0;
  }
}

// A descriptor is all zeros (an operand the kernel does not use, e.g. no mask) or has a known
// type, every extent in [1, 2^32], at most 2^40 elements, strides in [0, 2^40] and an address
// below 2^48, address and strides aligned for its elements: what the kernels assume when they
// index rows and cache lines with 64-bit arithmetic.
void check_tensor(const char* kernel, int index, const et_tensor& t) {
  static const et_tensor kUnused{};
  if (std::memcmp(&t, &kUnused, sizeof t) == 0) return;
  const std::string at = std::string("launch of ") + kernel + ": tensor " + std::to_string(index) + " ";
  const int64_t align = type_alignment(t.type);
  if (align == 0) throw Error(at + "has unknown type " + std::to_string(t.type));
  int64_t elements = 1;
  for (int d = 0; d < 4; d++) {
    if (t.ne[d] < 1 || t.ne[d] > kMaxExtent) {
      throw Error(at + "has extent ne[" + std::to_string(d) + "] = " + std::to_string(t.ne[d]) +
                  " outside [1, 2^32]");
    }
    elements = t.ne[d] > kMaxBytes / elements ? kMaxBytes + 1 : elements * t.ne[d];
    if (t.nb[d] < 0 || t.nb[d] > kMaxBytes || t.nb[d] % align != 0) {
      throw Error(at + "has stride nb[" + std::to_string(d) + "] = " + std::to_string(t.nb[d]) +
                  ", not a multiple of " + std::to_string(align) + " in [0, 2^40]");
    }
  }
  if (elements > kMaxBytes) throw Error(at + "has more than 2^40 elements");
  if (t.addr >= kMaxAddress) throw Error(at + "address is outside the device's 48-bit address space");
  if (t.addr % uint64_t(align) != 0) {
    throw Error(at + "address is not " + std::to_string(align) + "-byte aligned for its type");
  }
}

// The descriptors at the start of a kernel's block (every parameter struct begins with its
// tensors, followed by fewer than sizeof(et_tensor) bytes of scalars).
void check_tensors(uint32_t kernel_id, const uint8_t* block) {
  const size_t n = params_struct_bytes(kernel_id) / sizeof(et_tensor);
  for (size_t i = 0; i < n; i++) {
    et_tensor t;
    std::memcpy(&t, block + i * sizeof t, sizeof t);
    check_tensor(kernel_name(kernel_id), int(i), t);
  }
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
    if (op.flags & ~ET_UBER_WAIT) throw Error(at + "unknown flags " + std::to_string(op.flags));
    if (op.params_offset % 8 != 0 || op.params_offset < list_end ||
        uint64_t(op.params_offset) + params_struct_bytes(op.kernel_id) > bytes) {
      throw Error(at + kernel_name(op.kernel_id) + " parameters at offset " + std::to_string(op.params_offset) +
                  " are misaligned or outside the block after the op list");
    }
    check_tensors(op.kernel_id, block + op.params_offset);
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
  const auto* block = static_cast<const uint8_t*>(params);
  if (kernel_id == ET_KERNEL_ID_uberkernel) check_uberkernel(block, bytes);
  else check_tensors(kernel_id, block);
}

}  // namespace hart::et::emu
