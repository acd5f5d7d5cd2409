/* The minion program's entry (et_minion.h): sys_emu starts every hart here in M-mode. Each hart
 * takes the stack slot of its mhartid, turns the FPU on and runs et_minion_main (minion_env.c);
 * an exception comes back to this file's vector, which records it (et_minion_trap). */
#include "et_minion.h"

  .section .text.init, "ax"
  .globl _start
_start:
  la t0, trap_vector
  csrw mtvec, t0
  li t0, 0x6000            /* mstatus.FS = dirty: the F registers are usable */
  csrs mstatus, t0
  csrr a0, mhartid
  call stack_of
  call et_minion_main
1:
  wfi
  j 1b

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
2:
  wfi
  j 2b
