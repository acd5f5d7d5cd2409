/* GET_ROWS: dst (ne0, n, r2, r3) F32, row (i, j, k) = src row rows[i, j, k] of plane (j, k),
 * src F32, F16, Q8_0 or Q4_0 (dequantized), rows I32. */
#include "et_rows.h"

typedef struct get_rows_ctx {
  const et_env* env;
  const et_get_rows_params* p;
  const uint8_t* src;
  const uint8_t* rows;
  float* dst;
} get_rows_ctx;

static void get_rows_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const get_rows_ctx* ctx = (const get_rows_ctx*)c;
  const et_get_rows_params* p = ctx->p;
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const int64_t r = *(const int32_t*)(ctx->rows + idx[0] * p->rows.nb[0] + idx[1] * p->rows.nb[1] + idx[2] * p->rows.nb[2]);
  et_require(ctx->env, r >= 0 && r < p->src.ne[1], "get_rows: row index out of range");
  const uint8_t* src_row = ctx->src + r * p->src.nb[1] + idx[1] * p->src.nb[2] + idx[2] * p->src.nb[3];
  et_dequant_row(src_row, p->src.type, i0, i1, ctx->dst + row * p->dst.ne[0] + i0);
}

ET_KERNEL(get_rows) {
  const et_get_rows_params* p = (const et_get_rows_params*)params;
  const int32_t t = p->src.type;
  et_require(env, t == ET_TYPE_F32 || t == ET_TYPE_F16 || t == ET_TYPE_Q8_0 || t == ET_TYPE_Q4_0,
             "get_rows: src type must be F32, F16, Q8_0 or Q4_0");
  et_require(env, p->rows.type == ET_TYPE_I32 && p->dst.type == ET_TYPE_F32, "get_rows: rows must be I32, dst F32");
  et_require(env, p->dst.ne[0] == p->src.ne[0] && p->dst.ne[1] == p->rows.ne[0] && p->dst.ne[2] == p->rows.ne[1] &&
                      p->dst.ne[3] == p->rows.ne[2] && p->src.ne[2] == p->dst.ne[2] && p->src.ne[3] == p->dst.ne[3],
             "get_rows: shapes do not match");
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  get_rows_ctx ctx = {env, p, et_tensor_data(env, &p->src), et_tensor_data(env, &p->rows),
                      (float*)et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->dst.ne[0], get_rows_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  et_count(env, 0, (uint64_t)et_row_bytes(t, p->src.ne[0]) * ((n + p->dst.ne[0] - 1) / p->dst.ne[0]), 4 * n);
}
