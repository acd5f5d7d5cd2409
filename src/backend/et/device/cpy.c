/* CPY / CONT: dst (contiguous, F32 or F16) = src (any strides, F32 or F16), element by element in
 * row-major order of src's own shape (the two shapes may differ; the element counts agree). */
#include "et_rows.h"

static void cpy_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_cpy_params* p = (const et_cpy_params*)job->params;
  const et_tensor* s = &p->src;
  const et_tensor* d = &p->dst;
  const uint8_t* src = et_rows_data(job, s);
  uint8_t* dst = et_rows_data(job, d);
  const int64_t base = row * d->ne[0];
  (void)idx; /* dst's indices: src is walked in its own row-major order from flat index base + i0 */
  int64_t flat = base + i0;
  while (flat < base + i1) {
    int64_t sidx[3];
    et_row_index(s, flat / s->ne[0], sidx);
    const uint8_t* x = src + sidx[0] * s->nb[1] + sidx[1] * s->nb[2] + sidx[2] * s->nb[3];
    const int64_t j0 = flat % s->ne[0];
    const int64_t run = s->ne[0] - j0 < base + i1 - flat ? s->ne[0] - j0 : base + i1 - flat;
    for (int64_t j = 0; j < run; j++) et_store(dst, d->type, flat + j, et_load(x + (j0 + j) * s->nb[0], s->type, 0));
    flat += run;
  }
}

ET_KERNEL(cpy) {
  const et_cpy_params* p = (const et_cpy_params*)params;
  et_require(env, et_is_float_type(p->src.type) && et_is_float_type(p->dst.type), "cpy: types must be F32 or F16");
  et_require(env, et_nelements(&p->src) == et_nelements(&p->dst), "cpy: element counts differ");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, cpy_row, 0.0f);
  et_count(env, 0, n * (uint64_t)et_row_bytes(p->src.type, 1), n * (uint64_t)et_row_bytes(p->dst.type, 1));
}
