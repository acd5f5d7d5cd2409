/* What both device runtimes of et_env use of the chip (the bare-metal minion program,
 * minion_env.c, and the ET runtime's kernels, rt/rt_env.c): the fast local barriers (FLB, CSR
 * 0x820) and fast credit counters (FCC, CSR 0x821 and the shire's FCC_CREDINC ESRs) behind
 * et-common-libs' shire_barrier(), the scoped atomics at the global level, the allocation table
 * lookup behind et_ptr, and the ids of a hart. Every instruction is written as a numeric CSR or
 * an .insn, so an upstream assembler takes it. */
#ifndef ET_CHIP_H
#define ET_CHIP_H

#include <stdint.h>

#include "../device/et_device.h"
#include "et_minion.h"

/* The shire's own ESR block (shire field 0xFF): FCC_CREDINC_<2 thread + fcc> take a minion mask
 * (esr_defines.h: ESR_SHIRE(0xFF, FCC_CREDINC_0), user-mode protection). */
#define ET_ESR_FCC_CREDINC ((volatile uint64_t*)0x013FF400C0ull)
#define ET_FCC_SHIRE 0  /* credits of shire and launch barriers */
#define ET_FCC_MINION 1 /* credits of minion barriers */
#define ET_FLB_SHIRE 0
#define ET_FLB_LAUNCH 1

/* Joins FLB barrier; non-zero for the last of match + 1 harts to arrive (which resets it). */
static inline uint64_t et_flb_arrive(uint64_t barrier, uint64_t match) {
  uint64_t last;
  __asm__ volatile("csrrw %0, 0x820, %1" : "=r"(last) : "r"((match << 5) | barrier) : "memory");
  return last;
}

/* Waits for (and takes) one credit of this hart's FCC fcc. */
static inline void et_fcc_wait(uint64_t fcc) { __asm__ volatile("csrw 0x821, %0" : : "r"(fcc) : "memory"); }

/* One credit to FCC fcc of hart `thread` of each minion of minion_mask in this shire. */
static inline void et_fcc_credit(uint64_t thread, uint64_t fcc, uint64_t minion_mask) {
  ET_ESR_FCC_CREDINC[thread * 2 + fcc] = minion_mask;
}

/* The scoped atomics at the global level (past every shire's L2): amoaddg.d, amoorg.d, and a
 * global load (amoorg.d of zero). */
static inline uint64_t et_amo_add_global(volatile uint64_t* p, uint64_t v) {
  uint64_t old;
  __asm__ volatile(".insn r 0x3b, 3, 0x01, %0, %1, %2" : "=r"(old) : "r"(p), "r"(v) : "memory");
  return old;
}

static inline uint64_t et_amo_or_global(volatile uint64_t* p, uint64_t v) {
  uint64_t old;
  __asm__ volatile(".insn r 0x3b, 3, 0x21, %0, %1, %2" : "=r"(old) : "r"(p), "r"(v) : "memory");
  return old;
}

static inline uint64_t et_load_global(volatile uint64_t* p) { return et_amo_or_global(p, 0); }

static inline uint32_t et_popcount64(uint64_t v) {
  uint32_t n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

/* Whether [addr, addr + bytes) lies inside one of the count allocations (sorted by address). */
static inline int et_in_allocations(const et_minion_alloc* allocs, uint32_t count, uint64_t addr, uint64_t bytes) {
  uint32_t lo = 0, hi = count; /* the last allocation starting at or below addr */
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (allocs[mid].addr <= addr) lo = mid;
    else hi = mid;
  }
  if (count == 0 || allocs[lo].addr > addr) return 0;
  const uint64_t offset = addr - allocs[lo].addr;
  return offset <= allocs[lo].bytes && bytes <= allocs[lo].bytes - offset;
}

static inline void et_copy_message(char* dst, const char* src) {
  uint32_t i = 0;
  for (; src[i] && i + 1 < ET_MINION_MESSAGE_BYTES; i++) dst[i] = src[i];
  dst[i] = 0;
}

/* The ids of absolute hart `hart` in a launch on shire_mask (et_device.h); the callbacks and the
 * runtime state are the caller's. */
static inline void et_env_ids(et_env* env, uint64_t hart, uint64_t shire_mask) {
  const uint32_t shire = (uint32_t)(hart / ET_HARTS_PER_SHIRE);
  env->hart_id = (uint32_t)hart;
  env->shire_id = shire;
  env->minion_id = (uint32_t)(hart % ET_HARTS_PER_SHIRE / ET_HARTS_PER_MINION);
  env->hart_in_minion = (uint32_t)(hart % ET_HARTS_PER_MINION);
  env->thread_id = et_popcount64(shire_mask & ((1ull << shire) - 1)) * ET_HARTS_PER_SHIRE +
                   (uint32_t)(hart % ET_HARTS_PER_SHIRE);
  env->num_threads = et_popcount64(shire_mask) * ET_HARTS_PER_SHIRE;
  env->shire_mask = shire_mask;
}

/* et_env's barriers on the chip, the same for both runtimes: each one's per-hart state
 * (env->runtime) starts with this, filled with its own cache evictions. */
typedef struct et_chip_barriers {
  volatile uint64_t* counter; /* the launch barriers' counter (global atomics; zero at the launch) */
  volatile uint64_t* abort;   /* the launch's abort flag (global atomics), or 0: never aborted */
  uint64_t launch_barriers;   /* completed so far: the counter's target */
  uint32_t shires;
  void (*evict_l1)(void); /* writes back and drops this minion's L1 to the L2, and waits */
  void (*evict_l2)(void); /* the same for the whole of this shire's L2 */
  void (*leave)(const et_env* env); /* the launch was aborted: leaves the kernel, does not return */
} et_chip_barriers;

static inline void et_chip_leave_if_aborted(const et_env* env, const et_chip_barriers* b) {
  if (b->abort && et_load_global(b->abort)) b->leave(env);
}

/* et-common-libs' shire_barrier(): the last of the shire's 64 harts to join the FLB hands every
 * hart a credit. A launch barrier's last hart first evicts the shire's L2 and meets the other
 * shires' last harts at the launch's counter (or stops waiting when the launch is aborted). */
static inline void et_chip_shire_barrier(const et_env* env, et_chip_barriers* b, uint64_t flb, int global_step) {
  __asm__ volatile("fence" : : : "memory");
  if (et_flb_arrive(flb, ET_HARTS_PER_SHIRE - 1)) {
    if (global_step) b->evict_l2();
    if (global_step && b->shires > 1) {
      const uint64_t target = b->launch_barriers * b->shires;
      et_amo_add_global(b->counter, 1);
      while (et_load_global(b->counter) < target && !(b->abort && et_load_global(b->abort))) {
      }
    }
    et_fcc_credit(0, ET_FCC_SHIRE, 0xFFFFFFFFull);
    et_fcc_credit(1, ET_FCC_SHIRE, 0xFFFFFFFFull);
  }
  et_fcc_wait(ET_FCC_SHIRE);
  et_chip_leave_if_aborted(env, b);
}

/* The two harts of the minion: a credit to the other one, then wait for its. The L1 is split
 * (each hart caches in sets of its own), so each first writes back and drops the minion's L1:
 * what it wrote reaches the L2, where the other hart and the tensor unit's TensorLoads read it,
 * and no line it cached stays to be read stale after the other hart rewrote it. */
static inline void et_chip_minion_barrier(const et_env* env, et_chip_barriers* b) {
  __asm__ volatile("fence" : : : "memory");
  b->evict_l1();
  et_fcc_credit(env->hart_in_minion ^ 1, ET_FCC_MINION, 1ull << env->minion_id);
  et_fcc_wait(ET_FCC_MINION);
  et_chip_leave_if_aborted(env, b);
}

/* et_env's barrier (env->runtime is the et_chip_barriers); 0 for an unknown scope. */
static inline int et_chip_barrier(const et_env* env, int scope) {
  et_chip_barriers* b = (et_chip_barriers*)env->runtime;
  switch (scope) {
    case ET_SEAM:
      return 1;
    case ET_BARRIER_MINION:
      et_chip_minion_barrier(env, b);
      return 1;
    case ET_BARRIER_SHIRE:
      et_chip_shire_barrier(env, b, ET_FLB_SHIRE, 0);
      return 1;
    case ET_BARRIER_LAUNCH:
      /* What this minion wrote leaves its caches before any other minion may read it, and
       * nothing it cached stays to be read stale: the minion barrier evicts its L1, the shire's
       * last hart its L2. */
      et_chip_minion_barrier(env, b);
      b->launch_barriers++;
      et_chip_shire_barrier(env, b, ET_FLB_LAUNCH, 1);
      return 1;
    default:
      return 0;
  }
}

#endif
