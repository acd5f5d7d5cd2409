/* _start of a kernel in the ET runtime's format (et_rt.h), as test-compute-kernels' crt.S: the
 * firmware has set the stack and a0 = the argument blob; entry_point's return value goes back
 * through the RETURN_FROM_KERNEL system call. The kernels use no gp (compiled without linker
 * relaxation), so none is set. */
#include "et_rt.h"

  .section .text.init, "ax"
  .globl _start
_start:
  call entry_point
  mv a1, a0
  li a2, ET_RT_KERNEL_RETURN_SUCCESS
  li a0, ET_RT_SYSCALL_RETURN_FROM_KERNEL
  ecall
1:
  j 1b
