// The "avx512_vnni" kernel set: AVX-512 + VNNI: as avx512, with vpdpbusd for the u8 x s8 block dots.
// The kernels are the shared x86 sources (set_body.inc) compiled for this target.
#include "backend/cpu/arch/x86/target.h"  // first: its diagnostics apply to immintrin.h

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/arch/x86/sets.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/repack.h"
#include "quant/blocks.h"
#include "quant/iq_levels.h"

#define HART_X86_WIDE 1
#define HART_X86_SET_FILL fill_avx512_vnni
#define HART_X86_VNNI 1

HART_X86_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")

#include "backend/cpu/arch/x86/set_body.inc"

HART_X86_TARGET_END
