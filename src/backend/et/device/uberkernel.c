/* The uberkernel: runs a list of sub-kernel launches inside one launch, dispatching each by its
 * kernel id. Saves the per-launch gap of the host runtime. Where the host asks for it
 * (ET_UBER_WAIT: the sub-kernel reads what an earlier one wrote, or overwrites what it read), a
 * barrier over every hart of the launch comes first: the caches are not coherent and sub-kernels
 * split work differently, so nothing of one may start before the other has finished everywhere.
 * Sub-kernels on disjoint memory run back to back on each hart, without one. */
#include "et_rows.h"

#define ET_KERNEL_ENTRY(name) ET_KERNEL(name);
#include "kernels.def"
#undef ET_KERNEL_ENTRY

static const et_kernel_fn et_kernel_table[ET_KERNEL_COUNT] = {
#define ET_KERNEL_ENTRY(name) et_kernel_##name,
#include "kernels.def"
#undef ET_KERNEL_ENTRY
};

ET_KERNEL(uberkernel) {
  const et_uber_params* u = (const et_uber_params*)params;
  const et_uber_op* ops = (const et_uber_op*)(u + 1);
  for (uint32_t i = 0; i < u->count; i++) {
    et_require(env, ops[i].kernel_id < ET_KERNEL_COUNT && ops[i].kernel_id != ET_KERNEL_ID_uberkernel,
               "uberkernel: bad sub-kernel id");
    et_require(env, ops[i].params_offset % 8 == 0, "uberkernel: misaligned sub-kernel parameters");
    if (i > 0) {
      et_barrier(env, ET_SEAM);
      if (ops[i].flags & ET_UBER_WAIT) et_barrier(env, ET_BARRIER_LAUNCH);
    }
    et_kernel_table[ops[i].kernel_id]((const uint8_t*)params + ops[i].params_offset, env);
  }
}
