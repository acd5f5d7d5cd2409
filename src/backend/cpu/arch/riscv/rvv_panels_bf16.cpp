// BF16 weights in 32-row panels (rvv_panels.h) times BF16 activations, with plain RVV integer
// widening (no Zvfbf*): a bf16 is the top half of an f32, so widening is vzext + shift, exact.
#include <cstring>

#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

struct Bf16Weights {
  static vfloat32m4_t widen(const uint16_t* column, size_t vl) {
    const vuint32m4_t u = __riscv_vzext_vf2_u32m4(__riscv_vle16_v_u16m2(column, vl), vl);
    return __riscv_vreinterpret_v_u32m4_f32m4(__riscv_vsll_vx_u32m4(u, 16, vl));
  }
  static float act(const std::byte* x, int64_t k) {
    const uint32_t bits = uint32_t(reinterpret_cast<const uint16_t*>(x)[k]) << 16;  // BF16 rows: 2-byte aligned
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
};

}  // namespace

void fill_rvv_panels_bf16(Kernels& k) {
  k.panel[uint32_t(Type::BF16)] = {kPanelRows, pack_panel_16bit, gemm_panels<Bf16Weights>};
}

}  // namespace hart::cpu::riscv
