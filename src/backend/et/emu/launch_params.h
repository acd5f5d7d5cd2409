// Host-side validation of a launch's parameter block, before it is copied to the device: a kernel
// reads its whole block (and the uberkernel follows the offsets in its own), so a block that is
// too short, or an uberkernel list pointing outside its block, would be read past its end.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hart::et::emu {

// Bytes of the parameter block of built-in kernel `kernel_id` (an et_kernel_id); for the
// uberkernel, of its header alone.
size_t launch_params_bytes(uint32_t kernel_id);

// Throws hart::Error naming the problem when `params` is not a well-formed block for kernel
// `kernel_id`: shorter than its struct; a tensor descriptor with an unknown type, an extent
// outside [1, 2^32], a negative or huge stride, an address past 2^48, or an address or stride
// misaligned for its type (all-zero descriptors, unused operands, pass); for the uberkernel, an op list or a
// sub-kernel block that does not fit, a misaligned offset, or an unknown / nested sub-kernel.
// Whether the addresses lie in device memory is checked on the device, at each access.
void check_launch_params(uint32_t kernel_id, const void* params, size_t bytes);

}  // namespace hart::et::emu
