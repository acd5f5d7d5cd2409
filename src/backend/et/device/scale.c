/* SCALE: dst = src * scale + bias (F32). */
#include "et_rows.h"

static void scale_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_scale_params* p = (const et_scale_params*)job->params;
  const uint8_t* x = et_rows_src(job, &p->src, idx);
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) out[i] = *(const float*)(x + i * p->src.nb[0]) * p->scale + p->bias;
}

ET_KERNEL(scale) {
  const et_scale_params* p = (const et_scale_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32, "scale: tensors must be F32");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "scale: shapes differ");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, scale_row, 0.0f);
  et_count(env, 2 * n, 4 * n, 4 * n);
}
