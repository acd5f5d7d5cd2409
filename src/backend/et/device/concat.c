/* CONCAT (F32): dst = src0 and src1 joined along dim, ggml's semantics; the sources may have any
 * strides (views, permutations). Along dim 0 a row is src0's row then src1's; along dim 1..3 a
 * row comes whole from src0 or, past its extent, from src1. Elements are independent: the output
 * is split on any line. */
#include "et_rows.h"

/* out[i] = element i - from of the source row at x (stride nb0), for i in [i0, i1). */
static void concat_copy(float* out, const uint8_t* x, int64_t nb0, int64_t from, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; i++) out[i] = *(const float*)(x + (i - from) * nb0);
}

static void concat_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_concat_params* p = (const et_concat_params*)job->params;
  const et_tensor* a = &p->src0;
  const et_tensor* b = &p->src1;
  float* out = et_rows_out(job, row);
  if (p->dim == 0) {
    const int64_t split = a->ne[0];
    if (i0 < split) concat_copy(out, et_rows_src(job, a, idx), a->nb[0], 0, i0, i1 < split ? i1 : split);
    if (i1 > split) concat_copy(out, et_rows_src(job, b, idx), b->nb[0], split, i0 > split ? i0 : split, i1);
    return;
  }
  /* idx holds dims 1..3: dim d is idx[d - 1]. */
  int64_t at[3] = {idx[0], idx[1], idx[2]};
  const int from_a = at[p->dim - 1] < a->ne[p->dim];
  if (!from_a) at[p->dim - 1] -= a->ne[p->dim];
  const et_tensor* s = from_a ? a : b;
  concat_copy(out, et_rows_src(job, s, at), s->nb[0], 0, i0, i1);
}

ET_KERNEL(concat) {
  const et_concat_params* p = (const et_concat_params*)params;
  const et_tensor* a = &p->src0;
  const et_tensor* b = &p->src1;
  et_require(env, a->type == ET_TYPE_F32 && b->type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "concat: tensors must be F32");
  et_require(env, p->dim >= 0 && p->dim < 4, "concat: dim must be 0..3");
  for (int d = 0; d < 4; d++) {
    const int64_t want = d == p->dim ? a->ne[d] + b->ne[d] : a->ne[d];
    et_require(env, p->dst.ne[d] == want && (d == p->dim || b->ne[d] == a->ne[d]),
               "concat: shapes do not join along dim");
  }
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, concat_row, 0.0f);
  et_count(env, 0, 4 * n, 4 * n);
}
