/* memset for the bare-metal minion program, which links no C library: C lets a compiler emit
 * calls to it even in freestanding code (clang does for `et_env env = {0}` in minion_env.c; GCC
 * stores the zeros inline). The flags' -fno-builtin keeps the compiler from turning this loop
 * back into a call to itself. */
#include <stddef.h>

void* memset(void* dst, int value, size_t n);

void* memset(void* dst, int value, size_t n) {
  unsigned char* p = (unsigned char*)dst;
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)value;
  return dst;
}
