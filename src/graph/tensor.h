// The tensor: a typed view of up to 4 dimensions, plus the op that produces it.
// Conventions are ggml's: ne[0] is the innermost (contiguous) dimension, nb[i] is the byte
// stride of dimension i, and a row is ne[0] elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "types/tensor_type.h"

namespace hart {

constexpr int kMaxDims = 4;
constexpr int kMaxSrc = 8;
constexpr int kMaxOpParams = 16;  // 32-bit words
constexpr int kMaxName = 64;

// Ops keep ggml's names so op reports line up with llama.cpp's docs/ops/*.csv.
enum class Op : uint8_t {
  NONE,            // a leaf: weight, input or cache
  // data movement
  GET_ROWS,        // src0 [n, rows] (any type), src1 I32 [m]          -> F32 [n, m]
  SET_ROWS,        // src0 dst [n, rows], src1 F32 [n, m], src2 I64 [m] -> view of src0; src3: computed after it
  CPY,             // src0 -> src1 (type conversion), result is a view of src1
  CONT,            // make src0 contiguous
  CONCAT,          // src0 and src1 joined along dim params[0] (their other dims equal) -> F32
  RESHAPE, VIEW, PERMUTE, TRANSPOSE,  // no computation: metadata only
  // element-wise (src1 broadcasts over src0 along every dim where it has size 1)
  ADD, SUB, MUL, DIV, SCALE,
  CLAMP,           // min(max(x, params[0]), params[1]) (f32 bounds)
  UNARY,           // params[0] = Unary
  GLU,             // params[0] = Glu; src0 gate [n, ...], src1 up [n, ...] -> [n, ...]
  // row-wise
  NORM,            // layer norm without weights: (x - mean) / sqrt(var + eps); params: f32 eps
  RMS_NORM,        // params: f32 eps
  L2_NORM,         // x / max(|x|, eps); params: f32 eps
  SUM_ROWS,        // [n, ...] -> [1, ...]
  TOP_K,           // F32 [n, ...] -> I32 [k, ...]: per row the indices of its k largest values, largest
                   // first (ties: the lower index first); a sorted ggml_top_k / ggml_argsort_top_k
  SOFT_MAX,        // src1 optional mask F32|F16 [ne0, ne1, ...], src2 optional sinks F32 [ne2]; params: f32 scale, f32 max_bias
  ROPE,            // src1 I32 positions [ne2]; src2 optional F32 freq factors [n_dims/2]
  // matrix
  MUL_MAT,         // src0 W [k, n, b2, b3] (weights, any supported type), src1 X F32|F16 [k, m, b2', b3'] -> F32 [n, m, ...]
  MUL_MAT_ID,      // src0 experts [k, n, n_expert], src1 X F32 [k, 1 | n_used, T], src2 ids I32 [n_used, T]
                   // -> F32 [n, n_used, T] (see mul_mat_id())
  FLASH_ATTN_EXT,  // q [d, n_head, n_tok, b3], k [d, n_head_kv, n_kv, b3], v [dv, n_head_kv, n_kv, b3],
                   // mask F32|F16 [n_kv, n_tok, 1, 1|b3] -> F32 [dv, n_head, n_tok, b3]
  PAGED_ATTN,      // q [d, n_head, n_tok], k/v [d, n_head_kv, n_slots] (a slot pool), index I32 -> F32 [d, n_head, n_tok]
                   // (not a ggml op: many sequences attend their own slots of one pool; see paged_attn())
  // recurrent
  SSM_CONV,        // sx F32 [K-1+n_t, C, n_s], kernel F32 [K, C] -> F32 [C, n_t, n_s]: causal depthwise conv
  RWKV_WKV7,       // r, w, k, v, a, b F32 [S, H, T], state F32 [S*S*H, n_s] -> F32 [S*H, T + S*n_s] (see rwkv_wkv7())
  GATED_DELTA_NET, // q, k F32 [S, H_k, T], v [S, H, T], g, beta F32 [H, T], state F32 [S*S*H, n_s]
                   // -> F32 [S*H, T + S*n_s] (see gated_delta_net())
  COUNT
};
// params layout (32-bit words; "f32" words hold a float's bits, see param_f32):
//   SCALE [0] f32 s, [1] f32 bias          UNARY [0] Unary     GLU [0] Glu       RMS_NORM, NORM, L2_NORM [0] f32 eps
//   SOFT_MAX [0] f32 scale, [1] f32 max_bias (ALiBi)           PERMUTE [0..3] axes
//   ROPE [0] RopeMode, [1] n_dims, [2] f32 freq_base, [3] f32 freq_scale, [4] f32 attn_factor,
//        [5] f32 YaRN ext_factor, [6], [7] f32 YaRN's first and last ramp pairs (ggml's corr_dims)
//   FLASH_ATTN_EXT [0] f32 scale                                     PAGED_ATTN [0] f32 scale
//   CONCAT [0] dim                                                   CLAMP [0] f32 min, [1] f32 max
const char* op_name(Op op);

// UNARY kinds under ggml's names (unary_name). GELU is the tanh approximation, GELU_ERF the exact
// form, GELU_QUICK x * sigmoid(1.702 x); ROUND rounds half away from zero.
#define HART_UNARY_KINDS(X)                                                                                 \
  X(SILU) X(GELU) X(RELU) X(NEG) X(EXP) X(TANH) X(SIGMOID) X(SOFTPLUS) X(ABS) X(SGN) X(STEP) X(ELU) \
  X(GELU_QUICK) X(HARDSWISH) X(HARDSIGMOID) X(EXPM1) X(GELU_ERF) X(FLOOR) X(CEIL) X(ROUND) X(TRUNC) X(SQR)
enum class Unary : int32_t {
#define HART_X(name) name,
  HART_UNARY_KINDS(HART_X)
#undef HART_X
  COUNT
};
const char* unary_name(Unary u);  // "SILU", ...
// GLU: act(gate) * up, each kind with its activation (glu_activation): SWIGLU silu, GEGLU gelu,
// REGLU relu, GEGLU_ERF gelu_erf, GEGLU_QUICK gelu_quick.
enum class Glu : int32_t { SWIGLU, GEGLU, REGLU, GEGLU_ERF, GEGLU_QUICK, COUNT };
Unary glu_activation(Glu g);
const char* glu_name(Glu g);  // "SWIGLU", ...
// ROPE modes as in ggml: NORMAL rotates pairs (2i, 2i+1), NEOX rotates (i, i + n_dims/2).
enum class RopeMode : int32_t { NORMAL = 0, NEOX = 2 };

enum TensorFlags : uint32_t {
  kFlagInput = 1u << 0,   // filled by the caller before compute (tokens, positions, mask)
  kFlagOutput = 1u << 1,  // read by the caller after compute: its buffer is never reused
  kFlagWeight = 1u << 2,  // data owned by the model file / backend
  kFlagState = 1u << 3,   // a leaf the graphs write and read across calls (the KV cache): a
                          // backend may keep it in its own memory, where it stays authoritative
};

struct Tensor {
  Type type = Type::F32;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  size_t nb[kMaxDims] = {0, 0, 0, 0};

  Op op = Op::NONE;
  Tensor* src[kMaxSrc] = {};
  int32_t params[kMaxOpParams] = {};

  Tensor* view_src = nullptr;  // for views: the tensor whose memory this one aliases
  size_t view_offs = 0;
  void* data = nullptr;
  uint32_t flags = 0;
  char name[kMaxName] = {};

  int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return row_size(type, ne[0]); }
  // Bytes spanned from the first to one past the last element.
  size_t nbytes() const;
  bool is_contiguous() const;
  bool is_view() const { return view_src != nullptr; }

  // Element (i0, i1, i2, i3) address; for quantized types i0 must start a block.
  void* at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    const size_t bs = size_t(type_info(type).block_size);
    return static_cast<char*>(data) + (i0 / bs) * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
  }

  float param_f32(int i) const {
    float f;
    std::memcpy(&f, &params[i], 4);
    return f;
  }
  void set_param_f32(int i, float f) { std::memcpy(&params[i], &f, 4); }
  void set_name(const char* fmt, ...);
};

// Strides of a contiguous tensor of `type` with sizes ne.
void set_contiguous_strides(Tensor& t);

}  // namespace hart
