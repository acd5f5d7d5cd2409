/* SOFT_MAX (ggml soft_max_ext): dst = softmax(src * scale + slope * mask) per row of F32 src; mask
 * F32 or F16, row i1 of plane (i2 % m2, i3 % m3); slope ALiBi's for head i2 when max_bias > 0;
 * a head's sink (gpt-oss) joins the max and the denominator. */
#include "et_rows.h"

/* ALiBi's slope for head h of n_head, as ggml: the first n_head_log2 = 2^floor(log2 n_head) heads
 * m0^(h+1), the rest m1^(2(h - n_head_log2) + 1), m0 = 2^(-max_bias / n_head_log2), m1 = sqrt(m0). */
static float alibi_slope(float max_bias, int64_t h, int64_t n_head) {
  if (max_bias <= 0.0f) return 1.0f;
  int32_t n_head_log2 = 1;
  while (2 * (int64_t)n_head_log2 <= n_head) n_head_log2 *= 2;
  const float inv = et_recip((float)n_head_log2);
  const float m0 = et_pow(2.0f, -max_bias * inv);
  const float m1 = et_pow(2.0f, -0.5f * max_bias * inv);
  const int32_t hh = (int32_t)h;
  return hh < n_head_log2 ? et_pow(m0, (float)(hh + 1)) : et_pow(m1, (float)(2 * (hh - n_head_log2) + 1));
}

static float soft_max_logit(const et_soft_max_params* p, const float* x, const uint8_t* m, float slope, int64_t i) {
  const float v = x[i] * p->scale;
  return m ? v + slope * et_load(m, p->mask.type, i) : v;
}

static void soft_max_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_soft_max_params* p = (const et_soft_max_params*)job->params;
  const int64_t n = p->src.ne[0];
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  const uint8_t* m = p->has_mask ? et_rows_src(job, &p->mask, idx) : 0;
  const float slope = alibi_slope(p->max_bias, idx[1], p->src.ne[2]);
  const float sink = p->has_sinks ? ((const float*)et_rows_data(job, &p->sinks))[idx[1]] : -et_inf();
  float max = sink;
  for (int64_t i = 0; i < n; i++) max = et_fmax(max, soft_max_logit(p, x, m, slope, i));
  float sum = p->has_sinks ? et_exp(sink - max) : 0.0f;
  for (int64_t i = 0; i < n; i++) sum += et_exp(soft_max_logit(p, x, m, slope, i) - max);
  const float inv = sum == 0.0f ? 0.0f : et_recip(sum);
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) out[i] = et_exp(soft_max_logit(p, x, m, slope, i) - max) * inv;
}

ET_KERNEL(soft_max) {
  const et_soft_max_params* p = (const et_soft_max_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "soft_max: src and dst must be F32 with contiguous rows");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "soft_max: shapes differ");
  et_require(env, !p->has_mask || (et_is_float_type(p->mask.type) && p->mask.ne[0] == p->src.ne[0] &&
                                   p->mask.ne[1] >= p->src.ne[1] && et_row_bytes(p->mask.type, 1) == p->mask.nb[0]),
             "soft_max: mask must be F32/F16 rows covering src");
  et_require(env, !p->has_sinks || (p->sinks.type == ET_TYPE_F32 && et_is_contiguous(&p->sinks) &&
                                    et_nelements(&p->sinks) == p->src.ne[2]),
             "soft_max: sinks must be contiguous F32, one per plane of src");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, soft_max_row, 0.0f);
  const uint64_t rows = (n + (uint64_t)p->src.ne[0] - 1) / (uint64_t)p->src.ne[0];
  et_count(env, 30 * rows * (uint64_t)p->src.ne[0], 4 * rows * (uint64_t)p->src.ne[0], 4 * n);
}
