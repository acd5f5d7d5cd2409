/* The device kernels as a bare-metal minion program (et_minion.elf) for the vendor's simulator,
 * sw-sysemu's sys_emu: what the host and the program agree on. Shared by the host (C++, the
 * et-sysemu device, sysemu/) and the program (C, minion_env.c).
 *
 * sys_emu starts every hart of the enabled shires in M-mode at ET_MINION_ENTRY. The host loads,
 * per launch, the program, the launch block (kernel id, shire mask, the table of live device
 * allocations), the parameter block and the device memory image; every hart runs the kernel once
 * and stops; the host dumps the memory image and the hart status slots back.
 *
 * Simulated DRAM (starts at 0x80_0000_0000, sw-sysemu memmap.h):
 *   ET_MINION_ENTRY      the program (text, data), below ET_MINION_LAUNCH
 *   ET_MINION_LAUNCH     the launch block, then the allocation table
 *   ET_MINION_PARAMS     the kernel's parameter block
 *   ET_MINION_BARRIER    one 64-byte line per launch-barrier counter
 *   ET_MINION_STATUS     one et_minion_status per hart (whole lines: no two harts share one)
 *   ET_MINION_STACKS     ET_MINION_STACK_BYTES per hart, by mhartid
 *   ET_MINION_SCRATCH    ET_SHIRE_SCRATCH_BYTES per shire: the shires' L2 scratchpads' stand-in
 *   ET_MINION_HEAP       device allocations (the et::Device's malloc) */
#ifndef ET_MINION_H
#define ET_MINION_H

#ifdef __ASSEMBLER__
#define ET_U64(x) x
#else
#define ET_U64(x) x##ull
#include <stdint.h>

#include "../device/et_device.h"

#ifdef __cplusplus
extern "C" {
#endif
#endif

#define ET_MINION_ENTRY ET_U64(0x8000001000)
#define ET_MINION_LAUNCH ET_U64(0x8000200000)
#define ET_MINION_LAUNCH_BYTES ET_U64(0x100000)
#define ET_MINION_PARAMS ET_U64(0x8000300000)
#define ET_MINION_PARAMS_BYTES ET_U64(0x100000)
#define ET_MINION_BARRIER ET_U64(0x8000400000)
#define ET_MINION_STATUS ET_U64(0x8000410000)
#define ET_MINION_STACKS ET_U64(0x8001000000)
#define ET_MINION_STACK_BYTES ET_U64(0x10000)
#define ET_MINION_SCRATCH ET_U64(0x8010000000)
#define ET_MINION_HEAP ET_U64(0x8020000000)

#ifndef __ASSEMBLER__
#define ET_MINION_MAX_SHIRES 32 /* compute shires 0..31 (shire 32 is the master shire) */
#define ET_MINION_MAX_HARTS (ET_MINION_MAX_SHIRES * ET_HARTS_PER_SHIRE)
/* Allocations the launch block can list (16 bytes each after the header). */
#define ET_MINION_MAX_ALLOCS ((ET_MINION_LAUNCH_BYTES - 64) / 16)

/* sys_emu's end-of-test signals: this hart is done (validation0 PASS); the run is over
 * (validation1 ET_DIAG_PUTCHAR of EOT), which still dumps memory, as a FAIL would not. */
#define ET_MINION_PASS 0x1FEED000u
#define ET_MINION_END_OF_RUN ((1ull << 56) | 4)

typedef struct et_minion_alloc {
  uint64_t addr, bytes;
} et_minion_alloc;

typedef struct et_minion_launch {
  uint32_t kernel_id;
  uint32_t alloc_count;  /* entries of allocs, sorted by address */
  uint64_t shire_mask;
  uint64_t params_bytes;
  uint64_t reserved[5];
  et_minion_alloc allocs[]; /* ET_MINION_MAX_ALLOCS at most */
} et_minion_launch;

enum et_minion_state {
  ET_MINION_NOT_RUN = 0,    /* the hart never finished (the run ended first) */
  ET_MINION_DONE = 1,
  ET_MINION_FAILED = 2,     /* et_fail: message */
  ET_MINION_BAD_ACCESS = 3, /* et_ptr outside device allocations: addr, bytes */
  ET_MINION_TRAP = 4,       /* an exception: addr = mepc, bytes = mcause, value = mtval */
  ET_MINION_BAD_TENSOR = 5, /* a malformed tensor instruction: message */
  ET_MINION_ABORTED = 6     /* et-rt (rt/et_rt.h): left its kernel because another hart failed */
};

#define ET_MINION_MESSAGE_BYTES 176 /* a status slot is 256 bytes */

typedef struct et_minion_status {
  uint32_t state;
  uint32_t hart;
  uint64_t addr, bytes, value;
  uint64_t insns;        /* retired instructions of this hart's thread slot (see minion_env.c) */
  et_counters counters;  /* what the kernel reported */
  char message[ET_MINION_MESSAGE_BYTES];
} et_minion_status;

#ifdef __cplusplus
}
#endif
#endif /* __ASSEMBLER__ */

#endif
