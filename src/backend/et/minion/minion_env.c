/* The device side of et_env (et_device.h) on the chip: every hart of the launch enters
 * et_minion_main from start.S in M-mode, reads the launch block the host left (et_minion.h), runs
 * the kernel of kernels.def it names, and stops. Ids come from mhartid; barriers are the chip's
 * fast local barriers (FLB, CSR 0x820) and fast credit counters (FCC, CSR 0x821 and the shire's
 * FCC_CREDINC ESRs), as et-common-libs' shire_barrier() does, with a global atomic counter
 * between shires; a failure, a bad access or a trap is written to the hart's status slot and ends
 * the run, which the host turns into the launch's stream error. */
#include "et_chip.h"
#include "et_tensor_chip.h"

#define ET_KERNEL_ENTRY(name) ET_KERNEL(name);
#include "../device/kernels.def"
#undef ET_KERNEL_ENTRY

static const et_kernel_fn et_minion_kernels[] = {
#define ET_KERNEL_ENTRY(name) et_kernel_##name,
#include "../device/kernels.def"
#undef ET_KERNEL_ENTRY
};
#define ET_MINION_KERNEL_COUNT (sizeof et_minion_kernels / sizeof et_minion_kernels[0])

/* The per-hart state behind env->runtime. */
typedef struct minion_rt {
  et_chip_barriers barriers;
  et_minion_status* status;
  et_chip_tensor tensor;
} minion_rt;

/* Writes back and drops every line of the minion's L1 (split + scratchpad mode, which start.S
 * sets: sets 12-13 are hart 0's, 14-15 hart 1's, four ways each) to the shire's L2 (evict_sw, CSR
 * 0x7f9, destination 1, four sets from 12, way by way), then waits for the cache operations. One
 * asm block with the operand built in a register: a load between the ways (a constant from
 * .rodata) would cache a line in a set already evicted. */
static void evict_l1(void) {
  uint64_t op = (1ull << 58) | (12ull << 14) | 3; /* way 0; way w adds w << 6 */
  __asm__ volatile(
      "csrw 0x7f9, %0\n\taddi %0, %0, 64\n\t"
      "csrw 0x7f9, %0\n\taddi %0, %0, 64\n\t"
      "csrw 0x7f9, %0\n\taddi %0, %0, 64\n\t"
      "csrw 0x7f9, %0\n\t"
      "fence\n\tcsrwi 0x830, 6"
      : "+r"(op) : : "memory");
}

/* Writes back and drops the whole of this shire's L2 (all four banks of the shire cache,
 * SC_IDX_COP_SM_CTL opcode L2_EVICT, as the firmware's post-kernel cleanup), so that no shire
 * reads a stale line another shire has since written. */
#define ET_ESR_SC_COP(bank) ((volatile uint64_t*)(0x01C0300030ull | (0xFFull << 22) | ((uint64_t)(bank) << 13)))
#define ET_SC_OPCODE_L2_EVICT 3
#define ET_SC_STATE_IDLE 4
static void evict_l2(void) {
  *ET_ESR_SC_COP(0xF) = 1 | (ET_SC_OPCODE_L2_EVICT << 8);
  for (int bank = 0; bank < 4; bank++) {
    while ((*ET_ESR_SC_COP(bank) >> 24 & 0xFF) != ET_SC_STATE_IDLE) {
    }
  }
}

/* Ends the whole run at once, cleanly: validation1 ET_DIAG_PUTCHAR of EOT (sys_emu sets its
 * "done" flag; a FAIL, like an error, would stop it before it dumps the status slots). */
static __attribute__((noreturn)) void end_run(void) {
  __asm__ volatile("fence\n\tcsrw 0x8d1, %0" : : "r"(ET_MINION_END_OF_RUN) : "memory");
  for (;;) __asm__ volatile("wfi");
}

static __attribute__((noreturn)) void fail_with(const et_env* env, uint32_t state, const char* message) {
  et_minion_status* s = ((minion_rt*)env->runtime)->status;
  et_copy_message(s->message, message);
  s->state = state;
  end_run();
}

static void minion_fail(const et_env* env, const char* message) { fail_with(env, ET_MINION_FAILED, message); }

static void* minion_translate(const et_env* env, uint64_t addr, uint64_t bytes) {
  const et_minion_launch* l = (const et_minion_launch*)ET_MINION_LAUNCH;
  if (et_in_allocations(l->allocs, l->alloc_count, addr, bytes)) return (void*)addr;
  et_minion_status* s = ((minion_rt*)env->runtime)->status;
  s->addr = addr;
  s->bytes = bytes;
  s->state = ET_MINION_BAD_ACCESS;
  end_run();
}

static void barrier(const et_env* env, int scope) {
  if (!et_chip_barrier(env, scope)) minion_fail(env, "unknown barrier scope");
}

/* The matrix engine (et_tensor_chip.h): a malformed instruction, or one the tensor unit rejects,
 * ends the run as a bad tensor instruction. */
static void minion_tensor(const et_env* env, const et_tensor_insn* insn) {
  const char* err = et_tensor_check(insn, env->hart_in_minion, env->minion_id);
  if (!err) err = et_chip_tensor_run(env, &((minion_rt*)env->runtime)->tensor, insn);
  if (err) fail_with(env, ET_MINION_BAD_TENSOR, err);
}

/* Retired instructions: the PMU of each neighborhood (8 minions) counts, per thread slot, what its
 * harts retire once its first minion has selected the event (sw-sysemu counts into
 * neigh_pmu_counters[neighborhood][counter][thread]); that minion reads them at the end. */
#define ET_PMU_RETIRED_INST0 2
static int counts_neighborhood(uint32_t hart) { return hart % 16 < ET_HARTS_PER_MINION; }

void et_minion_main(uint64_t hart) {
  const et_minion_launch* l = (const et_minion_launch*)ET_MINION_LAUNCH;
  const uint32_t shire = (uint32_t)(hart / ET_HARTS_PER_SHIRE);
  if (counts_neighborhood((uint32_t)hart)) {
    __asm__ volatile("csrw 0x323, %0" : : "r"((uint64_t)(ET_PMU_RETIRED_INST0 + (hart & 1))));
  }
  et_minion_status* status = (et_minion_status*)ET_MINION_STATUS + hart;
  minion_rt rt; /* field by field: a whole-struct initializer would call memset (no libc here) */
  const et_chip_barriers barriers = {(volatile uint64_t*)ET_MINION_BARRIER, 0, 0, et_popcount64(l->shire_mask),
                                     evict_l1, evict_l2, 0};
  rt.barriers = barriers;
  rt.status = status;
  et_env env = {0};
  et_env_ids(&env, hart, l->shire_mask);
  env.counters = &status->counters;
  env.translate = minion_translate;
  env.barrier = barrier;
  env.fail = minion_fail;
  env.tensor = minion_tensor;
  env.shire_scratch = (uint8_t*)(ET_MINION_SCRATCH + (uint64_t)shire * ET_SHIRE_SCRATCH_BYTES);
  env.runtime = &rt;
  status->hart = (uint32_t)hart;
  if (l->kernel_id >= ET_MINION_KERNEL_COUNT) minion_fail(&env, "launch of an unknown kernel id");
  et_minion_kernels[l->kernel_id]((const void*)ET_MINION_PARAMS, &env);
  /* The shire's harts are all done before its counting minions read their neighborhoods. */
  et_chip_shire_barrier(&env, &rt.barriers, ET_FLB_SHIRE, 0);
  if (counts_neighborhood((uint32_t)hart)) {
    uint64_t insns;
    __asm__ volatile("csrr %0, 0xb03" : "=r"(insns));
    status->insns = insns;
  }
  status->state = ET_MINION_DONE;
  __asm__ volatile("fence\n\tcsrw 0x8d0, %0" : : "r"((uint64_t)ET_MINION_PASS) : "memory");
  for (;;) __asm__ volatile("wfi");
}

/* start.S's trap vector, on a fresh stack: an exception ends the run. */
void et_minion_trap(uint64_t hart, uint64_t cause, uint64_t epc, uint64_t tval) {
  et_minion_status* s = (et_minion_status*)ET_MINION_STATUS + hart;
  s->hart = (uint32_t)hart;
  s->addr = epc;
  s->bytes = cause;
  s->value = tval;
  s->state = ET_MINION_TRAP;
  end_run();
}
