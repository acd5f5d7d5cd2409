// Q8_0 / Q4_0 byte panels (rvv_panels_q.h) with Zvfh: one vfwcvt widens the fp16 weight scales
// (this file is compiled with -march=rv64gcv_zvfh).
#include "backend/cpu/arch/riscv/rvv_panels_q.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

struct ZvfhScales {
  static vfloat32m4_t scales(const uint16_t* d, size_t vl) {
    return __riscv_vfwcvt_f_f_v_f32m4(__riscv_vle16_v_f16m2(reinterpret_cast<const _Float16*>(d), vl), vl);
  }
};

}  // namespace

void fill_rvv_panels_q_zvfh(Kernels& k) { fill_quant_panels<ZvfhScales>(k); }

}  // namespace hart::cpu::riscv
