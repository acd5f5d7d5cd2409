/* UNARY (every et_activation) and CLAMP:
 * dst = act(src) (F32). src may be a view; dst is contiguous with its shape. */
#include "et_rows.h"

/* CLAMP as std::min(std::max(x, min), max): a NaN x passes through. */
static inline float unary_clamp(const et_unary_params* p, float x) {
  const float m = x < p->min ? p->min : x;
  return p->max < m ? p->max : m;
}

static void unary_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_unary_params* p = (const et_unary_params*)job->params;
  const uint8_t* x = et_rows_src(job, &p->src, idx);
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) {
    const float v = *(const float*)(x + i * p->src.nb[0]);
    out[i] = p->act == ET_ACT_CLAMP ? unary_clamp(p, v) : et_activate(p->act, v);
  }
}

ET_KERNEL(unary) {
  const et_unary_params* p = (const et_unary_params*)params;
  const int clamp = p->act == ET_ACT_CLAMP;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32, "unary: tensors must be F32");
  et_require(env, et_is_activation(p->act) || clamp, "unary: unknown activation");
  et_require(env, !clamp || p->min <= p->max, "unary: clamp bounds must satisfy min <= max");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "unary: shapes differ");
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, unary_row, 0.0f);
  et_count(env, (clamp ? 2 : et_activation_flops(p->act)) * n, 4 * n, 4 * n);
}
