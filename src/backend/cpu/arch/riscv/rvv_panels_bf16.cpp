// BF16 weights in 32-row panels (rvv_panels.h) times BF16 activations, with plain RVV integer
// widening (no Zvfbf*): a bf16 is the top half of an f32, so widening is vzext + shift, exact.
#include <cstring>

#include "backend/cpu/arch/riscv/rvv_panels_wide.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

struct Bf16Weights {
  template <int kRegs>
  static auto widen(const uint16_t* columns, size_t n) {
    const auto bits = [n](auto v) { return __riscv_vsll(__riscv_vzext_vf2(v, n), 16, n); };
    if constexpr (kRegs == 1)
      return __riscv_vreinterpret_v_u32m2_f32m2(bits(__riscv_vle16_v_u16m1(columns, n)));
    else if constexpr (kRegs == 2)
      return __riscv_vreinterpret_v_u32m4_f32m4(bits(__riscv_vle16_v_u16m2(columns, n)));
    else
      return __riscv_vreinterpret_v_u32m8_f32m8(bits(__riscv_vle16_v_u16m4(columns, n)));
  }
  static constexpr size_t kActBytes = sizeof(uint16_t);
  static float act(const std::byte* x, int64_t k) {
    const uint32_t bits = uint32_t(reinterpret_cast<const uint16_t*>(x)[k]) << 16;  // BF16 rows: 2-byte aligned
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
};

}  // namespace

void fill_rvv_panels_bf16(Kernels& k) {
  k.panel[uint32_t(Type::BF16)] = {kPanelRows, pack_panel_16bit, gemm_float_panels<Bf16Weights>, wide_scratch_bytes,
                                   wide_tile_rows()};
}

}  // namespace hart::cpu::riscv
