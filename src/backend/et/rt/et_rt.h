/* The device kernels in the ET runtime's kernel format (esperanto-tools-libs' loadCode and
 * kernelLaunch): what the et-rt device (rt_device.cpp) and the kernels' user-mode runtime
 * (rt_env.c) agree on. Shared by the host (C++) and the kernels (C).
 *
 * Each kernel of kernels.def is its own ELF, <name>.elf (the uberkernel's holds every kernel it
 * dispatches to), laid out as test-compute-kernels' sections.ld: linked at ET_RT_KERNEL_BASE,
 * crt.S's _start first, no .bss, one loadable segment, so that loadCode's placement (file offset
 * 0x1000 at its buffer + 0x1000) and its R_RISCV_64 relocations (the ELF keeps them, --emit-relocs:
 * the uberkernel's dispatch table holds addresses) fit. The Worker Minion firmware starts every
 * hart of the launch's shire mask in U-mode at _start, a0 = the argument blob: an et_rt_args,
 * then the kernel's parameter block. _start calls entry_point(args), which runs the kernel through
 * et_env and returns 0; the kernel's end, or a failure from anywhere inside it, goes back to the
 * firmware through the RETURN_FROM_KERNEL system call with the return value (negative: failed).
 *
 * Device memory the host sets aside for the kernels (rt_device.cpp): a status slot per hart (the
 * et_minion_status of et_minion.h, by absolute hart id), the allocation table et_ptr checks, a
 * ring of ET_RT_SYNC_LINES 64-byte lines (one per launch: the launch barriers' counter and the
 * abort flag, zero when the launch starts), the shires' L2 scratchpad stand-ins and the stacks. */
#ifndef ET_RT_H
#define ET_RT_H

#ifdef __ASSEMBLER__
#define ET_RT_U64(x) x
#else
#define ET_RT_U64(x) x##ull
#include <stdint.h>
#endif

#define ET_RT_KERNEL_BASE ET_RT_U64(0x8005801000) /* sections.ld's KERNEL_UMODE_ENTRY */
#define ET_RT_SYNC_LINES 4096
#define ET_RT_STACK_BYTES (16u << 10) /* per hart: flash attention's rows take more than the firmware's 4 KiB */

/* The firmware's system calls from U-mode (et-common-libs' etsoc/isa/syscall.h). */
#define ET_RT_SYSCALL_EVICT_L1 6            /* (use_tmask, destination level): this minion's L1 */
#define ET_RT_SYSCALL_RETURN_FROM_KERNEL 8  /* (return value, return type) */
#define ET_RT_SYSCALL_EVICT_WHOLE_L1_L2 11  /* this minion's L1, then the whole of this shire's L2 */
#define ET_RT_KERNEL_RETURN_SUCCESS 0

/* entry_point's return values: the firmware reports a negative one as the launch's error. */
#define ET_RT_FAILED (-1)  /* this hart failed: its status slot says how */
#define ET_RT_ABORTED (-2) /* this hart left because another one failed */

#ifndef __ASSEMBLER__
typedef struct et_rt_args {
  uint64_t status;      /* device address of the status slots, one per absolute hart id */
  uint64_t allocs;      /* device address of the allocation table (et_minion_alloc, by address) */
  uint32_t alloc_count;
  uint32_t reserved0;
  uint64_t shire_mask;
  uint64_t sync;        /* device address of this launch's line: [0] launch barriers' counter, [1] abort flag */
  uint64_t scratch;     /* device address of the shires' scratchpads, ET_SHIRE_SCRATCH_BYTES per shire */
  uint64_t params_bytes; /* the parameter block that follows this header */
  uint64_t reserved1;
} et_rt_args;           /* 64 bytes: the parameter block stays 8-byte aligned */
#endif

#endif
