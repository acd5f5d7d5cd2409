#include "graph/tensor.h"

#include <cstdarg>
#include <cstdio>

namespace hart {

const char* unary_name(Unary u) {
  static const char* const names[] = {
#define HART_X(name) #name,
      HART_UNARY_KINDS(HART_X)
#undef HART_X
  };
  return int32_t(u) >= 0 && u < Unary::COUNT ? names[int32_t(u)] : "?";
}

Unary glu_activation(Glu g) {
  static const Unary act[] = {Unary::SILU, Unary::GELU, Unary::RELU, Unary::GELU_ERF, Unary::GELU_QUICK};
  return act[int32_t(g)];
}

const char* glu_name(Glu g) {
  static const char* const names[] = {"SWIGLU", "GEGLU", "REGLU", "GEGLU_ERF", "GEGLU_QUICK"};
  return int32_t(g) >= 0 && g < Glu::COUNT ? names[int32_t(g)] : "?";
}

const char* op_name(Op op) {
  switch (op) {
    case Op::NONE: return "NONE";
    case Op::GET_ROWS: return "GET_ROWS";
    case Op::SET_ROWS: return "SET_ROWS";
    case Op::CPY: return "CPY";
    case Op::CONT: return "CONT";
    case Op::CONCAT: return "CONCAT";
    case Op::RESHAPE: return "RESHAPE";
    case Op::VIEW: return "VIEW";
    case Op::PERMUTE: return "PERMUTE";
    case Op::TRANSPOSE: return "TRANSPOSE";
    case Op::ADD: return "ADD";
    case Op::SUB: return "SUB";
    case Op::MUL: return "MUL";
    case Op::DIV: return "DIV";
    case Op::CLAMP: return "CLAMP";
    case Op::SCALE: return "SCALE";
    case Op::UNARY: return "UNARY";
    case Op::GLU: return "GLU";
    case Op::NORM: return "NORM";
    case Op::RMS_NORM: return "RMS_NORM";
    case Op::L2_NORM: return "L2_NORM";
    case Op::SUM_ROWS: return "SUM_ROWS";
    case Op::TOP_K: return "TOP_K";
    case Op::SOFT_MAX: return "SOFT_MAX";
    case Op::ROPE: return "ROPE";
    case Op::MUL_MAT: return "MUL_MAT";
    case Op::MUL_MAT_ID: return "MUL_MAT_ID";
    case Op::FLASH_ATTN_EXT: return "FLASH_ATTN_EXT";
    case Op::PAGED_ATTN: return "PAGED_ATTN";
    case Op::SSM_CONV: return "SSM_CONV";
    case Op::RWKV_WKV7: return "RWKV_WKV7";
    case Op::GATED_DELTA_NET: return "GATED_DELTA_NET";
    case Op::COUNT: break;
  }
  return "?";
}

size_t Tensor::nbytes() const {
  for (int i = 0; i < kMaxDims; i++)
    if (ne[i] <= 0) return 0;
  // As ggml_nbytes: the first dimension counts whole blocks, the others their last element.
  const TypeInfo& ti = type_info(type);
  size_t bytes = ti.block_size == 1 ? ti.type_size + size_t(ne[0] - 1) * nb[0]
                                    : size_t(ne[0] / ti.block_size) * nb[0];
  for (int i = 1; i < kMaxDims; i++) bytes += size_t(ne[i] - 1) * nb[i];
  return bytes;
}

bool Tensor::is_contiguous() const {
  // Dimensions of size 1 may have any stride: they are never stepped over.
  const TypeInfo& ti = type_info(type);
  size_t expected = ti.type_size;
  for (int i = 0; i < kMaxDims; i++) {
    if (ne[i] != 1 && nb[i] != expected) return false;
    expected *= size_t(i == 0 ? ne[0] / ti.block_size : ne[i]);
  }
  return true;
}

void Tensor::set_name(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(name, sizeof(name), fmt, args);
  va_end(args);
}

void set_contiguous_strides(Tensor& t) {
  const TypeInfo& ti = type_info(t.type);
  t.nb[0] = ti.type_size;
  t.nb[1] = t.nb[0] * size_t(t.ne[0] / ti.block_size);
  for (int i = 2; i < kMaxDims; i++) t.nb[i] = t.nb[i - 1] * size_t(t.ne[i - 1]);
}

}  // namespace hart
