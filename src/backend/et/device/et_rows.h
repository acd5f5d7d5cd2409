/* Reading and writing rows of the tensor types the kernels accept: F32, F16 (any element) and the
 * block types of et_blocks.h (dequantized). */
#ifndef ET_ROWS_H
#define ET_ROWS_H

#include "et_blocks.h"
#include "et_device.h"
#include "et_math.h"
#include "et_params.h"

/* Bytes of a row of n elements (n a multiple of the block size for block types); 0 for unknown types. */
static inline int64_t et_row_bytes(int32_t type, int64_t n) {
  switch (type) {
    case ET_TYPE_F32: case ET_TYPE_I32: return n * 4;
    case ET_TYPE_F16: return n * 2;
    case ET_TYPE_I64: return n * 8;
    default: return et_is_block_type(type) ? n / et_block_elems(type) * et_block_bytes(type) : 0;
  }
}

static inline int et_is_float_type(int32_t type) { return type == ET_TYPE_F32 || type == ET_TYPE_F16; }

/* Element i of an F32 or F16 row. */
static inline float et_load(const void* row, int32_t type, int64_t i) {
  if (type == ET_TYPE_F32) return ((const float*)row)[i];
  return et_f16_to_f32(((const uint16_t*)row)[i]);
}

static inline void et_store(void* row, int32_t type, int64_t i, float v) {
  if (type == ET_TYPE_F32) ((float*)row)[i] = v;
  else ((uint16_t*)row)[i] = et_f32_to_f16(v);
}

/* Elements [i0, i1) of a row of any accepted type, as floats into out[0 .. i1 - i0). The product
 * and the offset are separate statements so that no compiler fuses them into an fma: the values
 * are ggml's dequantization bit for bit. */
static inline void et_dequant_row(const void* row, int32_t type, int64_t i0, int64_t i1, float* out) {
  if (et_is_float_type(type)) {
    for (int64_t i = i0; i < i1; i++) out[i - i0] = et_load(row, type, i);
    return;
  }
  int32_t q[ET_QK];
  const int64_t ge = et_group_elems(type);
  for (int64_t g = i0 / ge; g * ge < i1; g++) {
    float offset;
    const float d = et_group_levels((const uint8_t*)row, type, g, q, &offset);
    for (int j = 0; j < ge; j++) {
      const int64_t i = g * ge + j;
      if (i < i0 || i >= i1) continue;
      const float scaled = (float)q[j] * d;
      out[i - i0] = scaled - offset;
    }
  }
}

/* sum + the dot product of a row of k elements of any accepted type with k floats, accumulated
 * in order (per group of a block type, scale * sum(q x) - offset * sum(x)): a row taken in pieces
 * gives the one-piece result bit for bit. */
static inline float et_dot_row_from(float sum, const void* row, int32_t type, const float* x, int64_t k) {
  if (type == ET_TYPE_F32) {
    const float* w = (const float*)row;
    for (int64_t i = 0; i < k; i++) sum += w[i] * x[i];
    return sum;
  }
  if (type == ET_TYPE_F16) {
    const uint16_t* w = (const uint16_t*)row;
    for (int64_t i = 0; i < k; i++) sum += et_f16_to_f32(w[i]) * x[i];
    return sum;
  }
  int32_t q[ET_QK];
  const int64_t ge = et_group_elems(type);
  for (int64_t g = 0; g < k / ge; g++) {
    float offset;
    const float d = et_group_levels((const uint8_t*)row, type, g, q, &offset);
    const float* xg = x + g * ge;
    float group_sum = 0.0f;
    for (int j = 0; j < ge; j++) group_sum += (float)q[j] * xg[j];
    sum += d * group_sum;
    if (offset != 0.0f) {
      float x_sum = 0.0f;
      for (int j = 0; j < ge; j++) x_sum += xg[j];
      sum -= offset * x_sum;
    }
  }
  return sum;
}

static inline float et_dot_row(const void* row, int32_t type, const float* x, int64_t k) {
  return et_dot_row_from(0.0f, row, type, x, k);
}

/* RMS_NORM's scale of a row of n F32 values, stride bytes apart: 1 / sqrt(mean(x^2) + eps), the
 * squares summed in order. inv_n = et_recip(n) (a kernel may compute it once). Every kernel that
 * normalizes a row (rms_norm, and the norms folded into rope and mul_mat) takes it from here, so
 * the folded norms give RMS_NORM's values bit for bit. */
static inline float et_rms_scale(const uint8_t* x, int64_t stride, int64_t n, float inv_n, float eps) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; i++) sum += *(const float*)(x + i * stride) * *(const float*)(x + i * stride);
  return et_rsqrt(sum * inv_n + eps);
}

/* Row r of a tensor (rows counted over dims 1..3 in row-major order) -> indices (i1, i2, i3). */
static inline void et_row_index(const et_tensor* t, int64_t row, int64_t idx[3]) {
  idx[0] = row % t->ne[1];
  idx[1] = (row / t->ne[1]) % t->ne[2];
  idx[2] = row / (t->ne[1] * t->ne[2]);
}

/* Byte offset of row (i1, i2, i3), each index taken modulo the tensor's extent (broadcast). */
static inline int64_t et_row_at(const et_tensor* t, const int64_t idx[3]) {
  return idx[0] % t->ne[1] * t->nb[1] + idx[1] % t->ne[2] * t->nb[2] + idx[2] % t->ne[3] * t->nb[3];
}

static inline int64_t et_nelements(const et_tensor* t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

static inline int et_is_contiguous(const et_tensor* t) {
  int64_t expect = et_row_bytes(t->type, t->ne[0]);
  if (et_is_float_type(t->type) && t->nb[0] != (t->type == ET_TYPE_F32 ? 4 : 2)) return 0;
  for (int d = 1; d < 4; d++) {
    if (t->ne[d] > 1 && t->nb[d] != expect) return 0;
    expect *= t->ne[d];
  }
  return 1;
}

/* Host view of every byte of a tensor (validated once, so kernels index it freely). */
static inline uint8_t* et_tensor_data(const et_env* env, const et_tensor* t) {
  int64_t span = et_row_bytes(t->type, t->ne[0]);
  for (int d = 1; d < 4; d++) span += (t->ne[d] - 1) * t->nb[d];
  return (uint8_t*)et_ptr(env, t->addr, (uint64_t)span);
}

/* min(1, max(0, (x + 3) / 6)) */
static inline float et_hardsigmoid(float x) {
  const float y = (x + 3.0f) * (1.0f / 6.0f);
  return y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
}

/* The activation act (an et_activation) of x; 0 for an unknown one (kernels validate act first). */
static inline float et_activate(int32_t act, float x) {
  switch (act) {
    case ET_ACT_SILU: return et_silu(x);
    case ET_ACT_GELU: return et_gelu(x);
    case ET_ACT_TANH: return et_tanh(x);
    case ET_ACT_SIGMOID: return et_sigmoid(x);
    case ET_ACT_EXP: return et_exp(x);
    case ET_ACT_NEG: return -x;
    case ET_ACT_RELU: return x < 0.0f ? 0.0f : x; /* NaN and -0 pass, as std::max(x, 0) */
    case ET_ACT_SOFTPLUS: return et_softplus(x);
    case ET_ACT_ABS: return et_fabs(x);
    case ET_ACT_SGN: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
    case ET_ACT_STEP: return x > 0.0f ? 1.0f : 0.0f;
    case ET_ACT_ELU: return x > 0.0f ? x : et_expm1(x);
    case ET_ACT_GELU_QUICK: return x * et_sigmoid(1.702f * x);
    case ET_ACT_HARDSIGMOID: return et_hardsigmoid(x);
    case ET_ACT_HARDSWISH: return x * et_hardsigmoid(x);
    case ET_ACT_EXPM1: return et_expm1(x);
    case ET_ACT_GELU_ERF: return 0.5f * x * (1.0f + et_erf(x * 0.70710678f));
    case ET_ACT_FLOOR: return et_floor(x);
    case ET_ACT_CEIL: return et_ceil(x);
    case ET_ACT_ROUND: return et_roundf(x);
    case ET_ACT_TRUNC: return et_trunc(x);
    case ET_ACT_SQR: return x * x;
    default: return 0.0f;
  }
}

/* CLAMP (between RELU and SOFTPLUS) is UNARY's alone: it takes bounds, not just x. */
static inline int et_is_activation(int32_t act) {
  return (act >= ET_ACT_SILU && act <= ET_ACT_SQR) && act != ET_ACT_CLAMP;
}

/* Flops the cost model counts for one act(x): the polynomial and Newton steps of et_exp, et_log
 * and et_recip, a compare or a sign flip. */
static inline uint64_t et_activation_flops(int32_t act) {
  switch (act) {
    case ET_ACT_EXP: return 15;
    case ET_ACT_SOFTPLUS: return 40;
    case ET_ACT_SIGMOID: return 22;
    case ET_ACT_NEG: case ET_ACT_RELU: case ET_ACT_ABS: case ET_ACT_SGN: case ET_ACT_STEP: case ET_ACT_SQR: return 1;
    case ET_ACT_HARDSIGMOID: case ET_ACT_HARDSWISH: case ET_ACT_FLOOR: case ET_ACT_CEIL: case ET_ACT_ROUND:
    case ET_ACT_TRUNC: return 4;
    default: return 25;
  }
}

static inline void et_require(const et_env* env, int ok, const char* message) {
  if (!ok) et_fail(env, message);
}

/* This hart's rows-pieces of a contiguous output tensor (F32, F16, or I32 indices: TOP_K). */
static inline et_range et_split_output(const et_env* env, const et_tensor* dst) {
  et_require(env, et_is_contiguous(dst) && (et_is_float_type(dst->type) || dst->type == ET_TYPE_I32),
             "output must be contiguous F32/F16/I32");
  return et_split_lines(env, dst->addr, et_nelements(dst), et_row_bytes(dst->type, 1), dst->ne[0]);
}

/* The same for kernels whose outputs are independent of each other (a matrix-vector product):
 * cut on any line boundary, so that even a single output row spreads over every hart. */
static inline et_range et_split_output_elements(const et_env* env, const et_tensor* dst) {
  et_require(env, et_is_contiguous(dst) && et_is_float_type(dst->type), "output must be contiguous F32/F16");
  return et_split_lines(env, dst->addr, et_nelements(dst), dst->type == ET_TYPE_F32 ? 4 : 2, 1);
}

/* ---- The driver of the row-wise kernels ------------------------------------------------------
 * A kernel that writes its contiguous output a row piece at a time validates its parameter block
 * and hands the rest to et_run_rows: map the block's tensors (its leading descriptors; an unused
 * one is all zero), split dst on cache lines, and call the kernel's row function for each piece
 * of a row this hart owns, with the row's indices. */

#define ET_MAX_TENSORS 7

/* The number of tensor descriptors leading parameter block *p (fewer than sizeof(et_tensor) bytes
 * of scalars follow them). */
#define ET_TENSORS(p) ((int)(sizeof *(p) / sizeof(et_tensor)))

typedef struct et_rows {
  const et_env* env;
  const void* params;
  const et_tensor* dst;
  uint8_t* data[ET_MAX_TENSORS]; /* host view of the block's tensor i; 0 for an unused one */
  float aux;                     /* a per-launch constant of the kernel (1/n, a theta scale) */
} et_rows;

/* Elements [i0, i1) of dst row `row`, which sits at indices idx = (i1, i2, i3) of dst. */
typedef void (*et_row_fn)(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1);

/* Host view of tensor t, a descriptor of the block. */
static inline uint8_t* et_rows_data(const et_rows* job, const et_tensor* t) {
  return job->data[t - (const et_tensor*)job->params];
}

/* Host view of the row of t at idx, each index modulo t's extent (broadcast). */
static inline const uint8_t* et_rows_src(const et_rows* job, const et_tensor* t, const int64_t idx[3]) {
  return et_rows_data(job, t) + et_row_at(t, idx);
}

/* Output row `row` of an F32 dst. */
static inline float* et_rows_out(const et_rows* job, int64_t row) {
  return (float*)et_rows_data(job, job->dst) + row * job->dst->ne[0];
}

/* The job of a parameter block: its tensors (the leading n_tensors descriptors) mapped. */
static inline et_rows et_rows_job(const et_env* env, const void* params, int n_tensors, const et_tensor* dst, float aux) {
  et_require(env, n_tensors <= ET_MAX_TENSORS, "a parameter block with more tensors than ET_MAX_TENSORS");
  et_rows job;
  job.env = env;
  job.params = params;
  job.dst = dst;
  job.aux = aux;
  const et_tensor* t = (const et_tensor*)params;
  for (int i = 0; i < n_tensors; i++) job.data[i] = t[i].ne[0] > 0 ? et_tensor_data(env, &t[i]) : 0;
  return job;
}

/* Runs fn over this hart's pieces of dst, cut between rows where rows fill whole lines
 * (any_line 0: row statistics are computed once), or on any line (any_line 1: outputs are
 * independent, so even a single row spreads over every hart). Returns the elements written. */
static inline int64_t et_run_rows(const et_env* env, const void* params, int n_tensors, const et_tensor* dst,
                                  int any_line, et_row_fn fn, float aux) {
  const et_range r = any_line ? et_split_output_elements(env, dst) : et_split_output(env, dst);
  if (r.begin == r.end) return 0;
  const et_rows job = et_rows_job(env, params, n_tensors, dst, aux);
  const int64_t row_len = dst->ne[0];
  for (int64_t flat = r.begin; flat < r.end;) {
    const int64_t row = flat / row_len;
    const int64_t start = row * row_len;
    const int64_t end = start + row_len < r.end ? start + row_len : r.end;
    int64_t idx[3];
    et_row_index(dst, row, idx);
    fn(&job, row, idx, flat - start, end - start);
    flat = end;
  }
  return r.end - r.begin;
}

#endif
