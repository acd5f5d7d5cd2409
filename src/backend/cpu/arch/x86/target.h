// Compiles a region of a file for an x86 ISA extension without per-file compiler flags:
// everything defined between HART_X86_TARGET_BEGIN("avx2,fma") and HART_X86_TARGET_END gets that
// target. Include every header before BEGIN, so that no inline function shared with other files
// is compiled (and possibly kept by the linker) with instructions the CPU may lack.
#pragma once

#define HART_X86_PRAGMA(...) _Pragma(#__VA_ARGS__)

#if defined(__clang__)
#define HART_X86_TARGET_BEGIN(features) \
  HART_X86_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
#define HART_X86_TARGET_END HART_X86_PRAGMA(clang attribute pop)
#else
#define HART_X86_TARGET_BEGIN(features) \
  HART_X86_PRAGMA(GCC push_options) HART_X86_PRAGMA(GCC target(features))
#define HART_X86_TARGET_END HART_X86_PRAGMA(GCC pop_options)
#endif

// GCC 12's AVX-512 intrinsic headers initialise "undefined" vectors from themselves, which
// -Wuninitialized reports wherever such an intrinsic is inlined (GCC bug 105593). Only the set
// files include this header.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
