/* GET_ROWS: dst (ne0, n, r2, r3) F32, row (i, j, k) = src row rows[i, j, k] of plane (j, k),
 * src F32, F16 or a block type of et_blocks.h (dequantized), rows I32. */
#include "et_rows.h"

static void get_rows_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_get_rows_params* p = (const et_get_rows_params*)job->params;
  const et_tensor* ix = &p->rows;
  const int64_t r = *(const int32_t*)(et_rows_data(job, ix) + idx[0] * ix->nb[0] + idx[1] * ix->nb[1] + idx[2] * ix->nb[2]);
  et_require(job->env, r >= 0 && r < p->src.ne[1], "get_rows: row index out of range");
  const uint8_t* src_row = et_rows_data(job, &p->src) + r * p->src.nb[1] + idx[1] * p->src.nb[2] + idx[2] * p->src.nb[3];
  et_dequant_row(src_row, p->src.type, i0, i1, et_rows_out(job, row) + i0);
}

ET_KERNEL(get_rows) {
  const et_get_rows_params* p = (const et_get_rows_params*)params;
  const int32_t t = p->src.type;
  et_require(env, et_is_float_type(t) || et_is_block_type(t),
             "get_rows: src type must be F32, F16 or a block type");
  et_require(env, et_is_float_type(t) || p->src.ne[0] % et_block_elems(t) == 0,
             "get_rows: rows of a block type must be whole blocks");
  et_require(env, p->rows.type == ET_TYPE_I32 && p->dst.type == ET_TYPE_F32, "get_rows: rows must be I32, dst F32");
  et_require(env, p->dst.ne[0] == p->src.ne[0] && p->dst.ne[1] == p->rows.ne[0] && p->dst.ne[2] == p->rows.ne[1] &&
                      p->dst.ne[3] == p->rows.ne[2] && p->src.ne[2] == p->dst.ne[2] && p->src.ne[3] == p->dst.ne[3],
             "get_rows: shapes do not match");
  const int64_t n = et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, get_rows_row, 0.0f);
  et_count(env, 0, (uint64_t)(et_row_bytes(t, p->src.ne[0]) * ((n + p->dst.ne[0] - 1) / p->dst.ne[0])), 4 * (uint64_t)n);
}
