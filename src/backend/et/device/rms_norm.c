/* RMS_NORM, optionally fused with the following MUL by a weight:
 * dst = src / sqrt(mean(src^2) + eps) [* weight], per row of src (F32). */
#include "et_rows.h"

/* job->aux = 1 / row length */
static void rms_norm_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_rms_norm_params* p = (const et_rms_norm_params*)job->params;
  const int64_t n = p->src.ne[0];
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  const float scale = et_rms_scale((const uint8_t*)x, 4, n, job->aux, p->eps);
  float* out = et_rows_out(job, row);
  if (p->has_weight) {
    const float* w = (const float*)et_rows_src(job, &p->weight, idx);
    for (int64_t i = i0; i < i1; i++) out[i] = x[i] * scale * w[i];
  } else {
    for (int64_t i = i0; i < i1; i++) out[i] = x[i] * scale;
  }
}

ET_KERNEL(rms_norm) {
  const et_rms_norm_params* p = (const et_rms_norm_params*)params;
  const int64_t n = p->src.ne[0];
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "rms_norm: src and dst must be F32 with contiguous rows");
  et_require(env, n > 0 && n < 0x7fffffff, "rms_norm: bad row length");
  et_require(env, !p->has_weight || (p->weight.type == ET_TYPE_F32 && p->weight.ne[0] == n && p->weight.nb[0] == 4),
             "rms_norm: weight must be F32 rows of the same length");
  const int64_t outputs = et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, rms_norm_row, et_recip((float)(int32_t)n));
  const int64_t rows = (outputs + n - 1) / n;
  et_count(env, (uint64_t)(rows * 2 * n + outputs * 2), (uint64_t)(rows * n * 4 + (p->has_weight ? outputs * 4 : 0)),
           (uint64_t)(outputs * 4));
}
