#include <array>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {

void ErrorSink::fail(std::string message) {
  std::lock_guard lock(mutex_);
  if (first_.empty()) first_ = std::move(message);
}

const OpImpl& op_impl(Op op) {
  static const std::array<OpImpl, size_t(Op::COUNT)> table = [] {
    std::array<OpImpl, size_t(Op::COUNT)> t{};
    t[size_t(Op::GET_ROWS)] = impl_get_rows();
    t[size_t(Op::SET_ROWS)] = impl_set_rows();
    t[size_t(Op::CPY)] = impl_copy();
    t[size_t(Op::CONT)] = impl_copy();
    t[size_t(Op::CONCAT)] = impl_concat();
    t[size_t(Op::ADD)] = impl_binary();
    t[size_t(Op::SUB)] = impl_binary();
    t[size_t(Op::MUL)] = impl_binary();
    t[size_t(Op::DIV)] = impl_binary();
    t[size_t(Op::CLAMP)] = impl_clamp();
    t[size_t(Op::SCALE)] = impl_scale();
    t[size_t(Op::UNARY)] = impl_unary();
    t[size_t(Op::GLU)] = impl_glu();
    t[size_t(Op::RMS_NORM)] = impl_rms_norm();
    t[size_t(Op::SOFT_MAX)] = impl_soft_max();
    t[size_t(Op::ROPE)] = impl_rope();
    t[size_t(Op::MUL_MAT)] = impl_mul_mat();
    t[size_t(Op::MUL_MAT_ID)] = impl_mul_mat_id();
    t[size_t(Op::FLASH_ATTN_EXT)] = impl_flash_attn_ext();
    t[size_t(Op::PAGED_ATTN)] = impl_paged_attn();
    t[size_t(Op::SSM_CONV)] = impl_ssm_conv();
    t[size_t(Op::RWKV_WKV7)] = impl_wkv7();
    t[size_t(Op::GATED_DELTA_NET)] = impl_gated_delta_net();
    t[size_t(Op::NORM)] = impl_norm();
    t[size_t(Op::L2_NORM)] = impl_l2_norm();
    t[size_t(Op::SUM_ROWS)] = impl_sum_rows();
    t[size_t(Op::TOP_K)] = impl_top_k();
    return t;
  }();
  return table[size_t(op)];
}

}  // namespace hart::cpu
