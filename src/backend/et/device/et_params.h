/* Parameter blocks of the device kernels, shared by the host (C++) and the kernels (C).
 * Tensors are described as in ggml: ne = elements per dimension, nb = byte strides, type in ggml's
 * numbering, data at a device address. Layouts are plain fixed-width fields (same on every lp64
 * target), 8-byte aligned. */
#ifndef ET_PARAMS_H
#define ET_PARAMS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum et_type {
  ET_TYPE_F32 = 0,
  ET_TYPE_F16 = 1,
  ET_TYPE_Q4_0 = 2,
  ET_TYPE_Q8_0 = 8,
  ET_TYPE_I32 = 26,
  ET_TYPE_I64 = 27
};

typedef struct et_tensor {
  uint64_t addr;
  int32_t type;
  int32_t reserved;
  int64_t ne[4];
  int64_t nb[4];
} et_tensor;

/* dst (N, M, b2, b3) = src0 (K, N, a2, a3) weights x src1 (K, M, b2, b3) F32 activations,
 * src0 broadcast over b2 / b3 (b2 % a2 == 0). K rows contiguous. */
typedef struct et_mul_mat_params {
  et_tensor src0, src1, dst;
} et_mul_mat_params;

/* dst = src / sqrt(mean(src^2) + eps) per row, times weight (broadcast by rows) when has_weight. */
typedef struct et_rms_norm_params {
  et_tensor src, weight, dst;
  float eps;
  int32_t has_weight;
} et_rms_norm_params;

enum et_binary_op { ET_BINARY_ADD = 0, ET_BINARY_MUL = 1 };

/* dst = src0 op src1, src1 repeated to src0's shape. */
typedef struct et_binary_params {
  et_tensor src0, src1, dst;
  int32_t op;
  int32_t reserved;
} et_binary_params;

/* dst = src * scale + bias */
typedef struct et_scale_params {
  et_tensor src, dst;
  float scale, bias;
} et_scale_params;

/* dst (ne0, n, r2, r3) row (i, j, k) = src row rows[i, j, k] of plane (j, k); rows I32. */
typedef struct et_get_rows_params {
  et_tensor src, rows, dst;
} et_get_rows_params;

/* dst row rows[i, j % r1, k % r2] of plane (j, k) = src row (i, j, k); rows I64 or I32. */
typedef struct et_set_rows_params {
  et_tensor src, rows, dst;
} et_set_rows_params;

enum et_rope_mode { ET_ROPE_NORMAL = 0, ET_ROPE_NEOX = 2 };

/* Rotary embedding of src (D, heads, tokens, b3) at positions pos (I32, tokens); the first n_dims
 * dimensions rotate, the rest copy. theta_i = freq_scale * pos * freq_base^(-2i / n_dims). */
typedef struct et_rope_params {
  et_tensor src, pos, dst;
  int32_t n_dims, mode;
  float freq_base, freq_scale, attn_factor;
  int32_t reserved;
} et_rope_params;

/* dst = softmax(src * scale + mask) per row; mask (F32 or F16) row i1 of plane (i2 % m2, i3 % m3). */
typedef struct et_soft_max_params {
  et_tensor src, mask, dst;
  float scale;
  int32_t has_mask;
} et_soft_max_params;

/* SwiGLU: dst = silu(gate) * up. */
typedef struct et_glu_params {
  et_tensor gate, up, dst;
} et_glu_params;

/* dst (contiguous, F32 or F16) = src (any strides, F32 or F16) in row-major element order. */
typedef struct et_cpy_params {
  et_tensor src, dst;
} et_cpy_params;

/* Attention as ggml's FLASH_ATTN_EXT: q (Dk, n_q, H, b3) F32, k (Dk, n_kv, H_kv, b3) and
 * v (Dv, n_kv, H_kv, b3) F32 or F16, optional mask (n_kv, >= n_q, m2, m3) F16 or F32,
 * dst (Dv, H, n_q, b3) F32 = softmax(q k^T * scale + mask) v, head h reading kv head h / (H / H_kv). */
typedef struct et_flash_attn_params {
  et_tensor q, k, v, mask, dst;
  float scale;
  int32_t has_mask;
} et_flash_attn_params;

#ifdef __cplusplus
}
#endif

#endif
