// The "avx2_vnni" kernel set: AVX2 + FMA + F16C with AVX-VNNI, the VEX-encoded 256-bit vpdpbusd of
// CPUs without AVX-512 (Alder Lake and later client cores): as avx2, with vpdpbusd for the u8 x s8
// block dots.
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

#define HART_X86_WIDE 0
#define HART_X86_SET_FILL fill_avx2_vnni
#define HART_X86_VNNI 1
#define HART_X86_AVX_VNNI 1

HART_X86_TARGET_BEGIN("avx2,fma,f16c,avxvnni")

#include "backend/cpu/arch/x86/set_body.inc"

HART_X86_TARGET_END
