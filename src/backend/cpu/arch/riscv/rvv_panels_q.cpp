// Q8_0 / Q4_0 byte panels (rvv_panels_q.h) on a core without Zvfh: the fp16 weight scales are
// widened with integer ops.
#include "backend/cpu/arch/riscv/rvv_math.h"
#include "backend/cpu/arch/riscv/rvv_panels_q.h"
#include "backend/cpu/arch/riscv/rvv_sets.h"

namespace hart::cpu::riscv {
namespace {

struct IntegerScales {
  static vfloat32m4_t scales(const uint16_t* d, size_t vl) { return fp16_to_f32_m4(d, vl); }
};

}  // namespace

void fill_rvv_panels_q(Kernels& k) { fill_quant_panels<IntegerScales>(k); }

}  // namespace hart::cpu::riscv
