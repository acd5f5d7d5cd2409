// F16 weights in 32-row panels (rvv_panels.h) times F32 activations (as in the reference set):
// Zvfh widens each column exactly to f32 (this file is compiled with -march=rv64gcv_zvfh).
#include "backend/cpu/arch/riscv/rvv_panels_wide.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

struct F16Weights {
  template <int kRegs>
  static auto widen(const uint16_t* columns, size_t n) {
    const auto* h = reinterpret_cast<const _Float16*>(columns);
    if constexpr (kRegs == 1)
      return __riscv_vfwcvt_f(__riscv_vle16_v_f16m1(h, n), n);
    else if constexpr (kRegs == 2)
      return __riscv_vfwcvt_f(__riscv_vle16_v_f16m2(h, n), n);
    else
      return __riscv_vfwcvt_f(__riscv_vle16_v_f16m4(h, n), n);
  }
  static constexpr size_t kActBytes = sizeof(float);
  static float act(const std::byte* x, int64_t k) { return reinterpret_cast<const float*>(x)[k]; }
};

}  // namespace

void fill_rvv_panels_f16(Kernels& k) {
  k.panel[uint32_t(Type::F16)] = {kPanelRows, pack_panel_16bit, gemm_float_panels<F16Weights>, wide_scratch_bytes,
                                  wide_tile_rows()};
}

}  // namespace hart::cpu::riscv
