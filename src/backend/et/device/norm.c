/* NORM and L2_NORM (F32), per row of src, optionally fused with the following MUL by a weight
 * (a LayerNorm's scale): NORM dst = (src - mean) / sqrt(var + eps), L2_NORM dst = src /
 * max(sqrt(sum src^2), eps). RMS_NORM has its own kernel (rms_norm.c). */
#include "et_rows.h"

/* The row's shift and scale: dst = (x - shift) * scale. job->aux = 1 / row length. Sums are in
 * float, in element order (the minion has no double); the CPU reference sums in double. */
static void norm_stats(const et_norm_params* p, const float* x, int64_t n, float inv_n, float* shift, float* scale) {
  float sum = 0.0f;
  if (p->kind == ET_NORM_L2) {
    for (int64_t i = 0; i < n; i++) sum += x[i] * x[i];
    *shift = 0.0f;
    *scale = et_recip(et_fmax(et_sqrt(sum), p->eps));
    return;
  }
  for (int64_t i = 0; i < n; i++) sum += x[i];
  const float mean = sum * inv_n;
  float var = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    const float d = x[i] - mean;
    var += d * d;
  }
  *shift = mean;
  *scale = et_rsqrt(var * inv_n + p->eps);
}

static void norm_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_norm_params* p = (const et_norm_params*)job->params;
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  float shift, scale;
  norm_stats(p, x, p->src.ne[0], job->aux, &shift, &scale);
  float* out = et_rows_out(job, row);
  if (p->has_weight) {
    const float* w = (const float*)et_rows_src(job, &p->weight, idx);
    for (int64_t i = i0; i < i1; i++) out[i] = (x[i] - shift) * scale * w[i];
  } else {
    for (int64_t i = i0; i < i1; i++) out[i] = (x[i] - shift) * scale;
  }
}

ET_KERNEL(norm) {
  const et_norm_params* p = (const et_norm_params*)params;
  const int64_t n = p->src.ne[0];
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "norm: src and dst must be F32 with contiguous rows");
  et_require(env, p->kind == ET_NORM_MEAN || p->kind == ET_NORM_L2, "norm: kind must be MEAN or L2");
  et_require(env, n > 0 && n < 0x7fffffff && p->eps >= 0.0f, "norm: bad row length or eps");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "norm: shapes differ");
  et_require(env, !p->has_weight || (p->weight.type == ET_TYPE_F32 && p->weight.ne[0] == n && p->weight.nb[0] == 4),
             "norm: weight must be F32 rows of the same length");
  const int64_t outputs = et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, norm_row, et_recip((float)(int32_t)n));
  const int64_t rows = (outputs + n - 1) / n;
  /* NORM reads its row twice (sum, then squared deviations); both one pass of 2 flops an element. */
  const int64_t passes = p->kind == ET_NORM_L2 ? 1 : 2;
  et_count(env, (uint64_t)(rows * 2 * passes * n + outputs * (p->has_weight ? 3 : 2)),
           (uint64_t)(rows * n * 4 + (p->has_weight ? outputs * 4 : 0)), (uint64_t)(outputs * 4));
}
