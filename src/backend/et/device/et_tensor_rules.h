/* The tensor instructions' rules (et_device.h), shared by every runtime of et_env: the built-in
 * emulator (emu/tensor_unit.cpp) and the two device runtimes (minion/et_tensor_chip.h), so that a
 * malformed instruction fails alike everywhere and the counters the cost model reads are the same.
 * The limits are the chip's encodings (sw-sysemu insns/tensors.cpp): 1..16 rows (a 4-bit field),
 * 1..16 FMA steps, a TensorLoad's source lines and stride on 64-byte lines (the address field
 * drops bits 5:0, the stride in x31 is not sign-extended), and a 16-column TensorStore's rows on
 * 64-byte lines too (a store of four 128-bit columns masks the row address to 64 bytes). */
#ifndef ET_TENSOR_RULES_H
#define ET_TENSOR_RULES_H

#include "et_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fault message of a malformed insn issued by hart hart_in_minion of minion minion_id (its
 * device address: mem as the runtime hands it to the kernel), or 0 when it is well-formed. */
static inline const char* et_tensor_check(const et_tensor_insn* t, uint32_t hart_in_minion, uint32_t minion_id) {
  const int rows_ok = t->rows >= 1 && t->rows <= ET_TILE;
  const uint64_t mem = (uint64_t)(uintptr_t)t->mem;
  if (hart_in_minion != 0) return "tensor instructions are issued by a minion's first hart";
  switch (t->op) {
    case ET_TENSOR_LOAD:
      if (!rows_ok || t->line < 0 || t->line >= ET_SCP_LINES) return "TensorLoad: 1..16 lines into scratchpad lines 0..47";
      if (mem % 64 != 0 || t->stride % 64 != 0 || t->stride < 0 || t->stride >= (1ll << 48))
        return "TensorLoad: source lines must be 64-byte aligned, a stride of 0..2^48 bytes";
      return 0;
    case ET_TENSOR_FMA32:
    case ET_TENSOR_FMA16A32:
      if (!rows_ok || t->k < 1 || t->k > ET_TILE || t->line < 0 || t->line >= ET_SCP_LINES || t->b_line < 0 ||
          t->b_line >= ET_SCP_LINES)
        return "TensorFMA: 1..16 rows and steps from scratchpad lines 0..47";
      return 0;
    case ET_TENSOR_STORE:
      if (!rows_ok || mem % 64 != 0 || t->stride % 64 != 0 || t->stride <= -(1ll << 47) || t->stride >= (1ll << 47))
        return "TensorStore: 1..16 rows of 16 fp32 to 64-byte aligned memory";
      return 0;
    case ET_TENSOR_SEND:
    case ET_TENSOR_RECV:
      if (!rows_ok || t->partner < 0 || t->partner >= ET_MINIONS_PER_SHIRE)
        return "TensorReduce: 1..16 rows with a minion of the same shire";
      if ((uint32_t)t->partner == minion_id) return "TensorReduce with its own minion";
      return 0;
    default:
      return "unknown tensor instruction";
  }
}

/* What well-formed insn adds to its hart's counters (tensor unit costs: emu/tensor_unit.h). SEND
 * charges the sender a cycle a row; RECV the adds (a flop an element) and a cycle a row. */
static inline void et_tensor_count(const et_tensor_insn* t, et_counters* c) {
  uint64_t flops = 0;
  switch (t->op) {
    case ET_TENSOR_FMA32:
    case ET_TENSOR_FMA16A32:
      flops = (uint64_t)(2 * t->rows * ET_TILE * t->k * (t->op == ET_TENSOR_FMA16A32 ? 2 : 1));
      c->tensor_cycles += (uint64_t)(t->rows * t->k);
      break;
    case ET_TENSOR_RECV:
      flops = (uint64_t)(t->rows * ET_TILE);
      c->tensor_cycles += (uint64_t)t->rows;
      break;
    default: /* LOAD, STORE, SEND: a line or a row a cycle */
      c->tensor_cycles += (uint64_t)t->rows;
      break;
  }
  c->flops += flops;
  c->tensor_flops += flops;
}

#ifdef __cplusplus
}
#endif

#endif
