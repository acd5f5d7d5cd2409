/* The device side of et_env in the ET runtime's kernel format (et_rt.h): every hart of the launch
 * runs entry_point in U-mode under the Worker Minion firmware. Ids come from the hartid CSR
 * (0xcd0); barriers are the chip's FLB and FCC, as in the bare-metal program (minion/et_chip.h),
 * with the firmware's system calls for the cache evictions that U-mode cannot issue itself; the
 * launch barrier's shires meet at a global atomic counter in this launch's sync line.
 *
 * A failure (et_fail, an access outside the allocations, a malformed tensor instruction) writes
 * the hart's status slot, raises the launch's abort flag, hands every hart of its shire one
 * credit of each FCC and returns to the firmware with ET_RT_FAILED. A hart that a credit wakes
 * from a barrier, or that arrives at one later, sees the flag and leaves too (ET_RT_ABORTED), as
 * does a shire's last hart waiting for the other shires, so no hart waits for one that is gone.
 * A trap is the firmware's (a U-mode exception ends that hart with the exception on the stream);
 * harts waiting for it at a barrier then wait for the firmware's kernel timeout. */
#include "../minion/et_chip.h"
#include "../minion/et_tensor_chip.h"
#include "et_rt.h"

typedef struct rt_state {
  et_chip_barriers barriers; /* counter and abort flag: this launch's sync line */
  const et_rt_args* args;
  et_minion_status* status;
  et_chip_tensor tensor;
} rt_state;

static inline int64_t et_rt_syscall(uint64_t number, uint64_t arg1, uint64_t arg2) {
  register uint64_t a0 __asm__("a0") = number;
  register uint64_t a1 __asm__("a1") = arg1;
  register uint64_t a2 __asm__("a2") = arg2;
  register uint64_t a3 __asm__("a3") = 0;
  __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3) : "memory");
  return (int64_t)a0;
}

static __attribute__((noreturn)) void leave(int64_t value) {
  __asm__ volatile("fence" : : : "memory");
  et_rt_syscall(ET_RT_SYSCALL_RETURN_FROM_KERNEL, (uint64_t)value, ET_RT_KERNEL_RETURN_SUCCESS);
  for (;;) {
  }
}

static void leave_aborted(const et_env* env) {
  ((const rt_state*)env->runtime)->status->state = ET_MINION_ABORTED;
  leave(ET_RT_ABORTED);
}

static __attribute__((noreturn)) void abort_launch(const et_env* env, uint32_t state) {
  const rt_state* rt = (const rt_state*)env->runtime;
  rt->status->state = state;
  et_amo_or_global(rt->barriers.abort, 1);
  __asm__ volatile("fence" : : : "memory");
  for (uint64_t thread = 0; thread < ET_HARTS_PER_MINION; thread++) {
    et_fcc_credit(thread, ET_FCC_SHIRE, 0xFFFFFFFFull);
    et_fcc_credit(thread, ET_FCC_MINION, 0xFFFFFFFFull);
  }
  leave(ET_RT_FAILED);
}

static void rt_fail(const et_env* env, const char* message) {
  et_copy_message(((const rt_state*)env->runtime)->status->message, message);
  abort_launch(env, ET_MINION_FAILED);
}

static void* rt_translate(const et_env* env, uint64_t addr, uint64_t bytes) {
  const rt_state* rt = (const rt_state*)env->runtime;
  const et_minion_alloc* allocs = (const et_minion_alloc*)rt->args->allocs;
  if (et_in_allocations(allocs, rt->args->alloc_count, addr, bytes)) return (void*)addr;
  rt->status->addr = addr;
  rt->status->bytes = bytes;
  abort_launch(env, ET_MINION_BAD_ACCESS);
}

/* The firmware's evictions: this minion's L1 to the L2; this shire's L2 (and the L1 again). */
static void evict_l1(void) { et_rt_syscall(ET_RT_SYSCALL_EVICT_L1, 0, 1); }
static void evict_l2(void) { et_rt_syscall(ET_RT_SYSCALL_EVICT_WHOLE_L1_L2, 0, 0); }

static void rt_barrier(const et_env* env, int scope) {
  if (!et_chip_barrier(env, scope)) rt_fail(env, "unknown barrier scope");
}

/* The matrix engine (minion/et_tensor_chip.h; the firmware leaves the L1 in split + scratchpad
 * mode for a kernel): a malformed instruction, or one the tensor unit rejects, fails the launch. */
static void rt_tensor(const et_env* env, const et_tensor_insn* insn) {
  rt_state* rt = (rt_state*)env->runtime;
  const char* err = et_tensor_check(insn, env->hart_in_minion, env->minion_id);
  if (!err) err = et_chip_tensor_run(env, &rt->tensor, insn);
  if (!err) return;
  et_copy_message(rt->status->message, err);
  abort_launch(env, ET_MINION_BAD_TENSOR);
}

/* Runs kernel on this hart for the launch args describes (rt/entry.c's entry_point). */
int et_rt_run(const et_rt_args* args, et_kernel_fn kernel) {
  uint64_t hart;
  __asm__ volatile("csrr %0, 0xcd0" : "=r"(hart));
  et_minion_status* status = (et_minion_status*)args->status + hart;
  volatile uint64_t* slot = (volatile uint64_t*)status; /* word by word: no memset on the device */
  for (uint32_t i = 0; i < sizeof *status / 8; i++) slot[i] = 0;
  status->hart = (uint32_t)hart;
  volatile uint64_t* sync = (volatile uint64_t*)args->sync;
  rt_state rt; /* field by field: a whole-struct initializer would call memset (no libc here) */
  const et_chip_barriers barriers = {sync, sync + 1, 0, et_popcount64(args->shire_mask), evict_l1, evict_l2, leave_aborted};
  rt.barriers = barriers;
  rt.args = args;
  rt.status = status;
  et_env env = {0};
  et_env_ids(&env, hart, args->shire_mask);
  env.counters = &status->counters;
  env.translate = rt_translate;
  env.barrier = rt_barrier;
  env.fail = rt_fail;
  env.tensor = rt_tensor;
  env.shire_scratch = (uint8_t*)(args->scratch + (uint64_t)env.shire_id * ET_SHIRE_SCRATCH_BYTES);
  env.runtime = &rt;
  kernel((const void*)(args + 1), &env);
  status->state = ET_MINION_DONE;
  __asm__ volatile("fence" : : : "memory");
  return 0;
}
