/* SET_ROWS: dst row rows[i, j % r1, k % r2] of plane (j, k) = src row (i, j, k).
 * src F32, dst F32 or F16 (contiguous, e.g. a KV cache), rows I64 or I32. Each hart scans every
 * source row and writes the part of its destination that falls in the hart's own cache lines. */
#include "et_rows.h"

ET_KERNEL(set_rows) {
  const et_set_rows_params* p = (const et_set_rows_params*)params;
  const et_tensor* s = &p->src;
  const et_tensor* ix = &p->rows;
  const et_tensor* d = &p->dst;
  et_require(env, s->type == ET_TYPE_F32 && s->nb[0] == 4, "set_rows: src must be F32 with contiguous rows");
  et_require(env, ix->type == ET_TYPE_I64 || ix->type == ET_TYPE_I32, "set_rows: rows must be I64 or I32");
  et_require(env, s->ne[0] == d->ne[0] && s->ne[1] == ix->ne[0] && s->ne[2] == d->ne[2] && s->ne[3] == d->ne[3] &&
                      s->ne[2] % ix->ne[1] == 0 && s->ne[3] % ix->ne[2] == 0,
             "set_rows: shapes do not match");
  const et_range r = et_split_output(env, d);
  if (r.begin == r.end) return;
  const uint8_t* src = et_tensor_data(env, s);
  const uint8_t* rows = et_tensor_data(env, ix);
  uint8_t* dst = et_tensor_data(env, d);
  const int64_t ne0 = d->ne[0];
  int64_t written = 0;
  for (int64_t k = 0; k < s->ne[3]; k++) {
    for (int64_t j = 0; j < s->ne[2]; j++) {
      for (int64_t i = 0; i < s->ne[1]; i++) {
        const uint8_t* ip = rows + i * ix->nb[0] + j % ix->ne[1] * ix->nb[1] + k % ix->ne[2] * ix->nb[2];
        const int64_t t = ix->type == ET_TYPE_I64 ? *(const int64_t*)ip : *(const int32_t*)ip;
        et_require(env, t >= 0 && t < d->ne[1], "set_rows: row index out of range");
        const int64_t start = ((k * d->ne[2] + j) * d->ne[1] + t) * ne0;
        const int64_t b = start > r.begin ? start : r.begin;
        const int64_t e = start + ne0 < r.end ? start + ne0 : r.end;
        const float* x = (const float*)(src + i * s->nb[1] + j * s->nb[2] + k * s->nb[3]);
        for (int64_t f = b; f < e; f++) et_store(dst, d->type, f, x[f - start]);
        if (e > b) written += e - b;
      }
    }
  }
  et_count(env, 0, (uint64_t)written * 4, (uint64_t)(written * et_row_bytes(d->type, 1)));
}
