// The "amx" kernel set: avx512_bf16 plus AMX-INT8 tiles for the prefill GEMMs of the 32-element
// panel types (amx_panels.inc).
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
#define HART_X86_SET_FILL fill_amx
#define HART_X86_VNNI 1
#define HART_X86_BF16 1
#define HART_X86_AMX 1

HART_X86_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16,amx-tile,amx-int8")

#include "backend/cpu/arch/x86/set_body.inc"

HART_X86_TARGET_END
