/* Reading and writing rows of the tensor types the kernels accept: F32, F16 (any element), and the
 * 32-element blocks Q8_0 {f16 d; int8 q[32]} and Q4_0 {f16 d; uint8 q[16]} (element j < 16 in the low
 * nibble of q[j], element j >= 16 in the high nibble of q[j - 16], value (nibble - 8) * d). */
#ifndef ET_ROWS_H
#define ET_ROWS_H

#include "et_device.h"
#include "et_math.h"
#include "et_params.h"

#define ET_QK 32
#define ET_Q8_0_BYTES 34
#define ET_Q4_0_BYTES 18

/* Bytes of a row of n elements (n a multiple of 32 for block types); 0 for unknown types. */
static inline int64_t et_row_bytes(int32_t type, int64_t n) {
  switch (type) {
    case ET_TYPE_F32: case ET_TYPE_I32: return n * 4;
    case ET_TYPE_F16: return n * 2;
    case ET_TYPE_I64: return n * 8;
    case ET_TYPE_Q8_0: return n / ET_QK * ET_Q8_0_BYTES;
    case ET_TYPE_Q4_0: return n / ET_QK * ET_Q4_0_BYTES;
    default: return 0;
  }
}

static inline int et_is_float_type(int32_t type) { return type == ET_TYPE_F32 || type == ET_TYPE_F16; }

static inline float et_load_f16(const uint8_t* p) {
  return et_f16_to_f32((uint16_t)(p[0] | (p[1] << 8)));
}

/* Element i of an F32 or F16 row. */
static inline float et_load(const void* row, int32_t type, int64_t i) {
  if (type == ET_TYPE_F32) return ((const float*)row)[i];
  return et_f16_to_f32(((const uint16_t*)row)[i]);
}

static inline void et_store(void* row, int32_t type, int64_t i, float v) {
  if (type == ET_TYPE_F32) ((float*)row)[i] = v;
  else ((uint16_t*)row)[i] = et_f32_to_f16(v);
}

/* The 32 integer levels of a block, and its scale. */
static inline float et_block_levels(const uint8_t* block, int32_t type, int32_t* q) {
  if (type == ET_TYPE_Q8_0) {
    for (int j = 0; j < ET_QK; j++) q[j] = (int8_t)block[2 + j];
  } else {
    for (int j = 0; j < ET_QK / 2; j++) {
      q[j] = (int32_t)(block[2 + j] & 0x0f) - 8;
      q[j + ET_QK / 2] = (int32_t)(block[2 + j] >> 4) - 8;
    }
  }
  return et_load_f16(block);
}

static inline int64_t et_block_bytes(int32_t type) {
  return type == ET_TYPE_Q8_0 ? ET_Q8_0_BYTES : ET_Q4_0_BYTES;
}

/* Elements [i0, i1) of a row of any accepted type, as floats into out[0 .. i1 - i0). */
static inline void et_dequant_row(const void* row, int32_t type, int64_t i0, int64_t i1, float* out) {
  if (et_is_float_type(type)) {
    for (int64_t i = i0; i < i1; i++) out[i - i0] = et_load(row, type, i);
    return;
  }
  const int64_t bb = et_block_bytes(type);
  int32_t q[ET_QK];
  for (int64_t b = i0 / ET_QK; b * ET_QK < i1; b++) {
    const float d = et_block_levels((const uint8_t*)row + b * bb, type, q);
    for (int j = 0; j < ET_QK; j++) {
      const int64_t i = b * ET_QK + j;
      if (i >= i0 && i < i1) out[i - i0] = (float)q[j] * d;
    }
  }
}

/* Dot product of a row of k elements of any accepted type with k floats. */
static inline float et_dot_row(const void* row, int32_t type, const float* x, int64_t k) {
  float sum = 0.0f;
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
  const int64_t bb = et_block_bytes(type);
  int32_t q[ET_QK];
  for (int64_t b = 0; b < k / ET_QK; b++) {
    const float d = et_block_levels((const uint8_t*)row + b * bb, type, q);
    const float* xb = x + b * ET_QK;
    float block_sum = 0.0f;
    for (int j = 0; j < ET_QK; j++) block_sum += (float)q[j] * xb[j];
    sum += d * block_sum;
  }
  return sum;
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

static inline void et_require(const et_env* env, int ok, const char* message) {
  if (!ok) et_fail(env, message);
}

/* Calls fn(ctx, row, i0, i1) for each piece [i0, i1) of a row (row_len elements) that the flat
 * element range r covers. */
typedef void (*et_row_fn)(void* ctx, int64_t row, int64_t i0, int64_t i1);

static inline void et_for_rows(et_range r, int64_t row_len, et_row_fn fn, void* ctx) {
  for (int64_t flat = r.begin; flat < r.end;) {
    const int64_t row = flat / row_len;
    const int64_t start = row * row_len;
    const int64_t end = start + row_len < r.end ? start + row_len : r.end;
    fn(ctx, row, flat - start, end - start);
    flat = end;
  }
}

/* This hart's rows-pieces of a contiguous output tensor. */
static inline et_range et_split_output(const et_env* env, const et_tensor* dst) {
  et_require(env, et_is_contiguous(dst) && et_is_float_type(dst->type), "output must be contiguous F32/F16");
  return et_split_lines(env, dst->addr, et_nelements(dst), dst->type == ET_TYPE_F32 ? 4 : 2, dst->ne[0]);
}

/* The same for kernels whose outputs are independent of each other (a matrix-vector product):
 * cut on any line boundary, so that even a single output row spreads over every hart. */
static inline et_range et_split_output_elements(const et_env* env, const et_tensor* dst) {
  et_require(env, et_is_contiguous(dst) && et_is_float_type(dst->type), "output must be contiguous F32/F16");
  return et_split_lines(env, dst->addr, et_nelements(dst), dst->type == ET_TYPE_F32 ? 4 : 2, 1);
}

#endif
