/* env->tensor on the chip, for both device runtimes (minion_env.c, rt/rt_env.c): each et_tensor_insn
 * as the CSR write of ET-SoC-1's tensor extension (encodings: sw-sysemu insns/tensors.cpp,
 * et-common-libs' tensors.h), followed by the TensorWait for its unit, so that the instruction is
 * complete when env->tensor returns, as on the built-in emulator. Written with numeric CSRs and
 * .insn, so an upstream assembler takes them.
 *
 * The L1 must be in split + scratchpad mode (mcache_control 3): the runtime's start-up sets it.
 *
 * The accumulator C is the minion's f0..f31 (row i in f[2i], f[2i+1], 8 fp32 lanes each). The
 * kernels are C compiled for rv64imf, whose code between two tensor instructions may use those
 * registers (and keeps its own floats in fs0..fs11 across calls), so C lives in memory between
 * instructions: an FMA, a TensorStore or a TensorReduce saves the caller's f registers, loads C
 * into them (flq2, 256 bits), issues the instruction, waits, saves C back (fsq2) and restores the
 * caller's. A TensorLoad touches no f register.
 *
 * A TensorStore leaves its lines in the shire's coalescing buffer: the buffer is drained (the
 * four banks' CB invalidate, et-common-libs' cb_drain) before env->tensor returns, so that the
 * minion may read what it stored (a score tile, an addend's rows) without a stale line. */
#ifndef ET_TENSOR_CHIP_H
#define ET_TENSOR_CHIP_H

#include <stdint.h>

#include "../device/et_tensor_rules.h"

/* The per-hart state: C between instructions, and the caller's f registers during one. */
typedef struct et_chip_tensor {
  uint8_t c[ET_TILE * 64] __attribute__((aligned(64)));
  uint32_t caller[32];
} et_chip_tensor;

#define ET_FREGS "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31"

/* One instruction on C: CSR csr <- value (x31 = x31v), then TensorWait event (sw-sysemu's
 * Hart::Waiting bit: 0 TensorLoad id 0, 7 TensorFMA, 8 TensorStore, 9 TensorReduce); C and the
 * caller's registers as above. flq2 / fsq2 are LOAD-FP / STORE-FP with funct3 5. */
#define ET_TENSOR_ON_C(csr, event, value, x31v, state)                                   \
  do {                                                                                    \
    register uint64_t et_x31 __asm__("x31") = (x31v);                                     \
    __asm__ volatile(".irp r," ET_FREGS "\n\tfsw f\\r, 4*\\r(%[caller])\n\t.endr\n\t"      \
                     ".irp r," ET_FREGS "\n\t.insn i 0x07, 5, f\\r, 32*\\r(%[c])\n\t.endr\n\t" \
                     "csrw " #csr ", %[v]\n\t"                                            \
                     "csrwi 0x830, " #event "\n\t"                                        \
                     ".irp r," ET_FREGS "\n\t.insn s 0x27, 5, f\\r, 32*\\r(%[c])\n\t.endr\n\t" \
                     ".irp r," ET_FREGS "\n\tflw f\\r, 4*\\r(%[caller])\n\t.endr"          \
                     :                                                                    \
                     : [v] "r"(value), [c] "r"((state)->c), [caller] "r"((state)->caller),  \
                       "r"(et_x31)                                                        \
                     : "memory");                                                         \
  } while (0)

/* The shire's cache banks' user-mode ESR (SC_IDX_COP_SM_CTL_USER, this shire: 0xFF). */
#define ET_ESR_SC_COP_USER(bank) ((volatile uint64_t*)(0x0100300100ull | (0xFFull << 22) | ((uint64_t)(bank) << 13)))
#define ET_SC_OPCODE_CB_INV 10
#define ET_SC_STATE_IDLE 4

static inline void et_chip_cb_drain(void) {
  __asm__ volatile("fence" : : : "memory");
  for (int bank = 0; bank < 4; bank++) {
    volatile uint64_t* cop = ET_ESR_SC_COP_USER(bank);
    while ((*cop >> 24 & 0xFF) != ET_SC_STATE_IDLE) {
    }
    *cop = 1 | (ET_SC_OPCODE_CB_INV << 8);
    while ((*cop >> 24 & 0xFF) != ET_SC_STATE_IDLE) {
    }
  }
}

/* Runs well-formed t (et_tensor_check) on this hart's minion; 0, or the message of the error the
 * tensor unit reported (the tensor_error CSR, 0x808, which it then clears). */
static inline const char* et_chip_tensor_run(const et_env* env, et_chip_tensor* s, const et_tensor_insn* t) {
  const uint64_t mem = (uint64_t)(uintptr_t)t->mem, rows = (uint64_t)(t->rows - 1);
  switch (t->op) {
    case ET_TENSOR_LOAD: { /* cmd 0 (plain load), start line, address, rows; x31: stride, id 0 */
      const uint64_t v = ((uint64_t)t->line << 53) | (mem & 0xFFFFFFFFFFC0ull) | rows;
      register uint64_t x31 __asm__("x31") = (uint64_t)t->stride & 0xFFFFFFFFFFC0ull;
      __asm__ volatile("csrw 0x83f, %0\n\tcsrwi 0x830, 0" : : "r"(v), "r"(x31) : "memory");
      break;
    }
    case ET_TENSOR_FMA32:
    case ET_TENSOR_FMA16A32: { /* 16 B columns, A rows, steps, B and A lines, type, first pass */
      const uint64_t type = t->op == ET_TENSOR_FMA16A32 ? 1 : 0;
      const uint64_t v = (3ull << 55) | (rows << 51) | ((uint64_t)(t->k - 1) << 47) | ((uint64_t)t->b_line << 12) |
                         ((uint64_t)t->line << 4) | (type << 1) | (t->first ? 1 : 0);
      ET_TENSOR_ON_C(0x801, 7, v, 0, s);
      break;
    }
    case ET_TENSOR_STORE: { /* from f0, 4 x 128 bits a row, rows, address; x31: stride */
      const uint64_t v = (3ull << 55) | (rows << 51) | (mem & 0xFFFFFFFFFFF0ull);
      ET_TENSOR_ON_C(0x87f, 8, v, (uint64_t)t->stride & 0xFFFFFFFFFFF0ull, s);
      et_chip_cb_drain();
      break;
    }
    default: { /* SEND (0) / RECV (1) with a minion (absolute index), 2 registers a row from f0, FADD */
      const uint64_t partner = (uint64_t)env->shire_id * ET_MINIONS_PER_SHIRE + (uint64_t)t->partner;
      const uint64_t v = (t->op == ET_TENSOR_RECV ? 1ull : 0ull) | (partner << 3) | ((uint64_t)(2 * t->rows) << 16);
      ET_TENSOR_ON_C(0x800, 9, v, 0, s);
      break;
    }
  }
  uint64_t error;
  __asm__ volatile("csrrw %0, 0x808, zero" : "=r"(error) : : "memory");
  if (error) return "the tensor unit reported an error (tensor_error CSR)";
  et_tensor_count(t, env->counters);
  return 0;
}

#endif
