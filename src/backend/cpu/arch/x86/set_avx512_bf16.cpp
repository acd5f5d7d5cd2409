// The "avx512_bf16" kernel set: avx512_vnni plus AVX512-BF16, for BF16 weights times BF16
// activations with vdpbf16ps (bf16_dots.inc).
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
#define HART_X86_SET_FILL fill_avx512_bf16
#define HART_X86_VNNI 1
#define HART_X86_BF16 1

HART_X86_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16")

#include "backend/cpu/arch/x86/set_body.inc"

HART_X86_TARGET_END
