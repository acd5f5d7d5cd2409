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
  ET_TYPE_Q4_1 = 3,
  ET_TYPE_Q5_0 = 6,
  ET_TYPE_Q5_1 = 7,
  ET_TYPE_Q8_0 = 8,
  ET_TYPE_Q4_K = 12,
  ET_TYPE_Q5_K = 13,
  ET_TYPE_Q6_K = 14,
  ET_TYPE_IQ4_NL = 20,
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

/* dst (N, M, b2, b3) = src0 (K, N, a2, a3) weights x src1 (K, M, b2, b3) F32 activations
 * [+ addend], src0 broadcast over b2 / b3 (b2 % a2 == 0). K rows contiguous. With has_add, the
 * F32 addend (a bias or a residual) repeats to dst's shape as src1 of ADD does (MUL_MAT+ADD).
 * With has_ids, MUL_MAT_ID (a mixture of experts): src0 the experts (K, N, E), src1 (K, 1 | U, T),
 * ids I32 (U, T) (any strides), dst (N, U, T) column (i, t) = expert ids(i, t) x src1 row
 * (i % src1.ne[1], t); no addend.
 * With glu = 1 + an et_activation (a gate and up projection fused with their GLU): src0 the gate's
 * weights, up the up projection's (src0's type and shape), dst = act(src0 x) * (up x); no addend,
 * no ids. With has_norm (one F32 activation row, RMS_NORM+MUL folded in): src1 is the norm's
 * input, each row taken as src1 / sqrt(mean(src1^2) + norm_eps) * norm_weight (F32, one row of K).
 * With x_shared, an earlier call of the same uberkernel phase read the same activations (and norm
 * weight): they sit in every shire's L2 and the kernel does not count them as DRAM traffic again. */
typedef struct et_mul_mat_params {
  et_tensor src0, src1, dst;
  et_tensor addend;
  et_tensor ids;
  et_tensor up;
  et_tensor norm_weight;
  int32_t has_add;
  int32_t has_ids;
  int32_t glu;
  int32_t x_shared;
  int32_t has_norm;
  float norm_eps;
} et_mul_mat_params;

/* dst = src / sqrt(mean(src^2) + eps) per row, times weight (broadcast by rows) when has_weight. */
typedef struct et_rms_norm_params {
  et_tensor src, weight, dst;
  float eps;
  int32_t has_weight;
} et_rms_norm_params;

enum et_binary_op { ET_BINARY_ADD = 0, ET_BINARY_MUL = 1, ET_BINARY_SUB = 2, ET_BINARY_DIV = 3 };

/* dst = src0 op src1, src1 repeated to src0's shape. */
typedef struct et_binary_params {
  et_tensor src0, src1, dst;
  int32_t op;
  int32_t reserved;
} et_binary_params;

enum et_norm_kind { ET_NORM_MEAN = 0, ET_NORM_L2 = 1 };

/* NORM (kind ET_NORM_MEAN): dst = (src - mean(src)) / sqrt(var(src) + eps); L2_NORM (ET_NORM_L2):
 * dst = src / max(sqrt(sum(src^2)), eps); per row of src (F32), times weight (F32 rows, broadcast
 * by rows) when has_weight (a LayerNorm's scale, fused). */
typedef struct et_norm_params {
  et_tensor src, weight, dst;
  float eps;
  int32_t kind;
  int32_t has_weight;
  int32_t reserved;
} et_norm_params;

/* SUM_ROWS: dst (1, n1, n2, n3) = the sum of each row of src (F32, rows contiguous). */
typedef struct et_sum_rows_params {
  et_tensor src, dst;
} et_sum_rows_params;

/* dst = src * scale + bias */
typedef struct et_scale_params {
  et_tensor src, dst;
  float scale, bias;
} et_scale_params;

/* TOP_K: dst I32 (k, n1, n2, n3) = per row of src (F32) the indices of its k largest values,
 * largest first, ties to the lower index (values in the total order of the CPU's
 * float_order_key: -0 below +0, NaNs at the ends by sign). */
typedef struct et_top_k_params {
  et_tensor src, dst;
} et_top_k_params;

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
 * dimensions rotate, the rest copy. theta_i = freq_scale * pos * freq_base^(-2i / n_dims), divided
 * by freq_factors[i] (F32, >= n_dims / 2 elements) when has_freq_factors; cos and sin are scaled
 * by attn_factor. With ext_factor != 0, YaRN: the angle mixes in the unscaled one by ext_factor
 * times a ramp from 1 at pair yarn_lo to 0 at yarn_hi, and cos and sin take 1 + 0.1 ln(1 / freq_scale). */
/* Two fusions, each row (head) then on one hart: with has_norm, each src row is first RMS-normalized
 * (norm_eps) and multiplied by norm_weight (F32, one row; Qwen3's Q/K norms, RMS_NORM+MUL before
 * the ROPE); with has_store, dst is also stored as SET_ROWS stores it into a contiguous cache
 * (F32/F16, rows of store_width = a multiple of dst's row, cache rows on 64-byte lines): flattened
 * row r of dst (store_width elements) goes to cache row store_rows[r] (I32/I64). */
typedef struct et_rope_params {
  et_tensor src, pos, dst;
  et_tensor freq_factors;
  et_tensor norm_weight;
  et_tensor cache, store_rows;
  int32_t n_dims, mode;
  float freq_base, freq_scale, attn_factor;
  float ext_factor, yarn_lo, yarn_hi;
  int32_t has_freq_factors;
  int32_t has_norm, has_store;
  float norm_eps;
  int32_t reserved;
} et_rope_params;

/* dst = softmax(src * scale + slope * mask) per row; mask (F32 or F16) row i1 of plane
 * (i2 % m2, i3 % m3); slope 1, or with max_bias > 0 ALiBi's slope of head i2; sinks (F32, one per
 * head i2) join each row's max and denominator. */
typedef struct et_soft_max_params {
  et_tensor src, mask, dst, sinks;
  float scale, max_bias;
  int32_t has_mask, has_sinks;
} et_soft_max_params;

/* The activations of UNARY and GLU: SiLU x / (1 + e^-x), GELU in ggml's tanh approximation, tanh
 * itself (Gemma's logit soft-capping), RWKV-7's sigmoid 1 / (1 + e^-x), e^x, -x and max(x, 0), and
 * Qwen 3.5's softplus log(1 + e^x) (x itself above 20, as ggml); for UNARY alone CLAMP
 * min(max(x, min), max), its bounds in the parameter block. The values are an ABI: a new
 * activation takes the next free one. */
enum et_activation {
  ET_ACT_SILU = 0,
  ET_ACT_GELU = 1,
  ET_ACT_TANH = 2,
  ET_ACT_SIGMOID = 3,
  ET_ACT_EXP = 4,
  ET_ACT_NEG = 5,
  ET_ACT_RELU = 6,
  ET_ACT_CLAMP = 7,
  ET_ACT_SOFTPLUS = 8,
  /* ggml's remaining element-wise unaries, under its names (GELU_ERF exact, GELU_QUICK
   * x sigmoid(1.702 x), ROUND half away from zero) */
  ET_ACT_ABS = 9,
  ET_ACT_SGN = 10,
  ET_ACT_STEP = 11,
  ET_ACT_ELU = 12,
  ET_ACT_GELU_QUICK = 13,
  ET_ACT_HARDSWISH = 14,
  ET_ACT_HARDSIGMOID = 15,
  ET_ACT_EXPM1 = 16,
  ET_ACT_GELU_ERF = 17,
  ET_ACT_FLOOR = 18,
  ET_ACT_CEIL = 19,
  ET_ACT_ROUND = 20,
  ET_ACT_TRUNC = 21,
  ET_ACT_SQR = 22
};

/* dst = act(src) (UNARY, any activation; CLAMP to [min, max]). */
typedef struct et_unary_params {
  et_tensor src, dst;
  int32_t act;
  float min, max;
  int32_t reserved;
} et_unary_params;

/* dst = act(gate) * up: SwiGLU with ET_ACT_SILU, GeGLU with ET_ACT_GELU, ReGLU with ET_ACT_RELU, ... */
typedef struct et_glu_params {
  et_tensor gate, up, dst;
  int32_t act;
  int32_t reserved;
} et_glu_params;

/* dst (contiguous, F32 or F16) = src (any strides, F32 or F16) in row-major element order. */
typedef struct et_cpy_params {
  et_tensor src, dst;
} et_cpy_params;

/* CONCAT: dst = src0 and src1 (F32, any strides) joined along dim (0..3), as ggml: element i of
 * dst is src0's where i[dim] < src0.ne[dim], else src1's at i[dim] - src0.ne[dim]. */
typedef struct et_concat_params {
  et_tensor src0, src1, dst;
  int32_t dim;
  int32_t reserved;
} et_concat_params;

/* SSM_CONV, ggml's causal depthwise convolution (Mamba, LFM2's short conv): sx (K - 1 + n_t, C,
 * n_s) F32, kernel (K, C) F32, dst (C, n_t, n_s) = sum_k sx(t + k, c, s) * kernel(k, c). */
typedef struct et_ssm_conv_params {
  et_tensor sx, kernel, dst;
} et_ssm_conv_params;

/* RWKV_WKV7, RWKV-7's state recurrence (graph.h's rwkv_wkv7): r, w, k, v, a, b F32 [S, H, T]
 * contiguous, state F32 [S*S*H, n_s] contiguous (sequence s's heads, each S rows of S), T a
 * multiple of n_s (sequence s owns tokens [s T/n_s, (s+1) T/n_s)); dst F32 [S*H, T + S*n_s]: y in
 * the first T columns, then each sequence's final state in S columns. With has_cells, cells I32
 * [n_s] and state a store [S*S*H, n_cells]: sequence s starts from column cells[s]. */
typedef struct et_rwkv_wkv7_params {
  et_tensor r, w, k, v, a, b, state, cells, dst;
  int32_t has_cells;
} et_rwkv_wkv7_params;

/* GATED_DELTA_NET, the gated delta rule of Qwen 3.5's linear attention (graph.h's
 * gated_delta_net): q, k F32 [S, H_k, T], v F32 [S, H, T] (rows contiguous, any strides; value
 * head h reads key head h % H_k), g and beta F32 contiguous, one value per (head, token) at
 * t H + h, state, cells and dst as RWKV_WKV7's (H heads of S rows of S). */
typedef struct et_gated_delta_net_params {
  et_tensor q, k, v, g, beta, state, cells, dst;
  int32_t has_cells;
} et_gated_delta_net_params;

/* Attention as ggml's FLASH_ATTN_EXT: q (Dk, n_q, H, b3) F32, k (Dk, n_kv, H_kv, b3) and
 * v (Dv, n_kv, H_kv, b3) F32 or F16, optional mask (n_kv, >= n_q, m2, m3) F16 or F32,
 * dst (Dv, H, n_q, b3) F32 = softmax(q k^T * scale + mask) v, head h reading kv head h / (H / H_kv). */
typedef struct et_flash_attn_params {
  et_tensor q, k, v, mask, dst;
  float scale;
  int32_t has_mask;
} et_flash_attn_params;

/* hart's PAGED_ATTN: q (Dk, H, n_tok) F32, k (Dk, H_kv, n_slots) and v (Dv, H_kv, n_slots) F32
 * or F16, index I32 (pairs (offset, count) per token, then the slot lists), dst (Dv, H, n_tok). */
typedef struct et_paged_attn_params {
  et_tensor q, k, v, index, dst;
  float scale;
  int32_t reserved;
} et_paged_attn_params;

/* The uberkernel: count sub-kernel launches run one after another in one launch. The parameter
 * block is this header, then count et_uber_op entries, then the sub-kernels' parameter blocks at
 * their offsets (from the start of the block, 8-byte aligned). kernel_id is the sub-kernel's index
 * in kernels.def; a sub-kernel with ET_UBER_WAIT starts only when every hart of the launch has
 * finished the ones before it (a barrier); without it, a hart goes on to it at once (the host sets
 * it wherever the sub-kernel touches memory one since the last barrier writes, or writes memory
 * one reads). */
#define ET_UBER_WAIT 1u

typedef struct et_uber_op {
  uint16_t kernel_id;
  uint16_t flags; /* ET_UBER_WAIT */
  uint32_t params_offset;
} et_uber_op;

typedef struct et_uber_params {
  uint32_t count;
  uint32_t reserved;
} et_uber_params;

/* Kernel ids: indices into kernels.def, the same on the host and in the device image. */
enum et_kernel_id {
#define ET_KERNEL_ENTRY(name) ET_KERNEL_ID_##name,
#include "kernels.def"
#undef ET_KERNEL_ENTRY
  ET_KERNEL_COUNT
};

#ifdef __cplusplus
}
#endif

#endif
