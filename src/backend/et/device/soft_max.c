/* SOFT_MAX (ggml soft_max_ext without ALiBi): dst = softmax(src * scale + mask) per row of F32 src;
 * mask F32 or F16, row i1 of plane (i2 % m2, i3 % m3). */
#include "et_rows.h"

typedef struct soft_max_ctx {
  const et_soft_max_params* p;
  const uint8_t* src;
  const uint8_t* mask;
  float* dst;
} soft_max_ctx;

static float soft_max_logit(const soft_max_ctx* ctx, const float* x, const uint8_t* m, int64_t i) {
  const float v = x[i] * ctx->p->scale;
  return m ? v + et_load(m, ctx->p->mask.type, i) : v;
}

static void soft_max_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const soft_max_ctx* ctx = (const soft_max_ctx*)c;
  const et_soft_max_params* p = ctx->p;
  const int64_t n = p->src.ne[0];
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const float* x = (const float*)(ctx->src + et_row_at(&p->src, idx));
  const uint8_t* m = ctx->mask ? ctx->mask + et_row_at(&p->mask, idx) : 0;
  float max = -et_inf();
  for (int64_t i = 0; i < n; i++) max = et_fmax(max, soft_max_logit(ctx, x, m, i));
  float sum = 0.0f;
  for (int64_t i = 0; i < n; i++) sum += et_exp(soft_max_logit(ctx, x, m, i) - max);
  const float inv = sum == 0.0f ? 0.0f : et_recip(sum);
  float* out = ctx->dst + row * n;
  for (int64_t i = i0; i < i1; i++) out[i] = et_exp(soft_max_logit(ctx, x, m, i) - max) * inv;
}

ET_KERNEL(soft_max) {
  const et_soft_max_params* p = (const et_soft_max_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "soft_max: src and dst must be F32 with contiguous rows");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "soft_max: shapes differ");
  et_require(env, !p->has_mask || (et_is_float_type(p->mask.type) && p->mask.ne[0] == p->src.ne[0] &&
                                   p->mask.ne[1] >= p->src.ne[1] && et_row_bytes(p->mask.type, 1) == p->mask.nb[0]),
             "soft_max: mask must be F32/F16 rows covering src");
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  soft_max_ctx ctx = {p, et_tensor_data(env, &p->src), p->has_mask ? et_tensor_data(env, &p->mask) : 0,
                      (float*)et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->src.ne[0], soft_max_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  const uint64_t rows = (n + (uint64_t)p->src.ne[0] - 1) / (uint64_t)p->src.ne[0];
  et_count(env, 30 * rows * (uint64_t)p->src.ne[0], 4 * rows * (uint64_t)p->src.ne[0], 4 * n);
}
