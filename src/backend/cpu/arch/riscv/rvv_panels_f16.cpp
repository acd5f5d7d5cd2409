// F16 weights in 32-row panels (rvv_panels.h) times F32 activations (as in the reference set):
// Zvfh widens each column exactly to f32 (this file is compiled with -march=rv64gcv_zvfh).
#include "backend/cpu/arch/riscv/rvv_panels.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"
#include "backend/cpu/repack.h"

namespace hart::cpu::riscv {
namespace {

struct F16Weights {
  static vfloat32m4_t widen(const uint16_t* column, size_t vl) {
    return __riscv_vfwcvt_f_f_v_f32m4(__riscv_vle16_v_f16m2(reinterpret_cast<const _Float16*>(column), vl), vl);
  }
  static float act(const std::byte* x, int64_t k) { return reinterpret_cast<const float*>(x)[k]; }
};

}  // namespace

void fill_rvv_panels_f16(Kernels& k) {
  k.panel[uint32_t(Type::F16)] = {kPanelRows, pack_panel_16bit, gemm_panels<F16Weights>};
}

}  // namespace hart::cpu::riscv
