/* SOFT_MAX (ggml soft_max_ext without ALiBi): dst = softmax(src * scale + mask) per row of F32 src;
 * mask F32 or F16, row i1 of plane (i2 % m2, i3 % m3). */
#include "et_rows.h"

static float soft_max_logit(const et_soft_max_params* p, const float* x, const uint8_t* m, int64_t i) {
  const float v = x[i] * p->scale;
  return m ? v + et_load(m, p->mask.type, i) : v;
}

static void soft_max_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_soft_max_params* p = (const et_soft_max_params*)job->params;
  const int64_t n = p->src.ne[0];
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  const uint8_t* m = p->has_mask ? et_rows_src(job, &p->mask, idx) : 0;
  float max = -et_inf();
  for (int64_t i = 0; i < n; i++) max = et_fmax(max, soft_max_logit(p, x, m, i));
  float sum = 0.0f;
  for (int64_t i = 0; i < n; i++) sum += et_exp(soft_max_logit(p, x, m, i) - max);
  const float inv = sum == 0.0f ? 0.0f : et_recip(sum);
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) out[i] = et_exp(soft_max_logit(p, x, m, i) - max) * inv;
}

ET_KERNEL(soft_max) {
  const et_soft_max_params* p = (const et_soft_max_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "soft_max: src and dst must be F32 with contiguous rows");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "soft_max: shapes differ");
  et_require(env, !p->has_mask || (et_is_float_type(p->mask.type) && p->mask.ne[0] == p->src.ne[0] &&
                                   p->mask.ne[1] >= p->src.ne[1] && et_row_bytes(p->mask.type, 1) == p->mask.nb[0]),
             "soft_max: mask must be F32/F16 rows covering src");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, soft_max_row, 0.0f);
  const uint64_t rows = (n + (uint64_t)p->src.ne[0] - 1) / (uint64_t)p->src.ne[0];
  et_count(env, 30 * rows * (uint64_t)p->src.ne[0], 4 * rows * (uint64_t)p->src.ne[0], 4 * n);
}
