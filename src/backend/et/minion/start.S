/* The minion program's entry (et_minion.h): sys_emu starts every hart here in M-mode. Each hart
 * takes the stack slot of its mhartid, turns the FPU on and runs et_minion_main (minion_env.c);
 * an exception comes back to this file's vector, which records it (et_minion_trap). */
#include "et_minion.h"

  .section .text.init, "ax"
  .globl _start
_start:
  /* The L1 in split + scratchpad mode (mcache_control 0 -> 1 -> 3, as the Worker Minion firmware
   * sets it before a kernel), the matrix engine's mode, before either hart of the minion touches
   * data (sysemu's checker wants the cache empty at the change): hart 0 switches, then gives
   * hart 1 a credit of FCC 1 (the minion barriers'; FCC_CREDINC of thread 1), which it waits for. */
  csrr t0, mhartid
  andi t1, t0, 1
  bnez t1, 1f
  li t1, 1
  csrw 0x7e0, t1
  fence
  li t1, 3
  csrw 0x7e0, t1
  fence
  srli t0, t0, 1
  andi t0, t0, 31          /* minion within the shire */
  li t1, 1
  sll t1, t1, t0
  li t2, 0x013FF400D8      /* ET_ESR_FCC_CREDINC[2 * 1 + 1] */
  sd t1, 0(t2)
  j 2f
1:
  csrwi 0x821, 1
2:
  la t0, trap_vector
  csrw mtvec, t0
  li t0, 0x6000            /* mstatus.FS = dirty: the F registers are usable */
  csrs mstatus, t0
  csrr a0, mhartid
  call stack_of
  call et_minion_main
3:
  wfi
  j 3b

/* sp = the top of hart a0's stack slot (keeps a0). */
stack_of:
  li sp, ET_MINION_STACKS
  addi t0, a0, 1
  slli t0, t0, 16          /* ET_MINION_STACK_BYTES */
  add sp, sp, t0
  ret

  .balign 4
trap_vector:
  csrr a0, mhartid
  mv t1, ra
  call stack_of
  csrr a1, mcause
  csrr a2, mepc
  csrr a3, mtval
  call et_minion_trap
4:
  wfi
  j 4b
