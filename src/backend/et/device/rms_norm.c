/* RMS_NORM, optionally fused with the following MUL by a weight:
 * dst = src / sqrt(mean(src^2) + eps) [* weight], per row of src (F32). */
#include "et_rows.h"

typedef struct rms_norm_ctx {
  const et_rms_norm_params* p;
  const uint8_t* src;
  const uint8_t* weight;
  float* dst;
  float inv_n;
} rms_norm_ctx;

static void rms_norm_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const rms_norm_ctx* ctx = (const rms_norm_ctx*)c;
  const et_rms_norm_params* p = ctx->p;
  const int64_t n = p->src.ne[0];
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const float* x = (const float*)(ctx->src + et_row_at(&p->src, idx));
  float sum = 0.0f;
  for (int64_t i = 0; i < n; i++) sum += x[i] * x[i];
  const float scale = et_rsqrt(sum * ctx->inv_n + p->eps);
  float* out = ctx->dst + row * n;
  if (p->has_weight) {
    const float* w = (const float*)(ctx->weight + et_row_at(&p->weight, idx));
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
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  rms_norm_ctx ctx = {p, et_tensor_data(env, &p->src), p->has_weight ? et_tensor_data(env, &p->weight) : 0,
                      (float*)et_tensor_data(env, &p->dst), et_recip((float)(int32_t)n)};
  et_for_rows(r, n, rms_norm_row, &ctx);
  const int64_t outputs = r.end - r.begin;
  const int64_t rows = (outputs + n - 1) / n;
  et_count(env, (uint64_t)(rows * 2 * n + outputs * 2), (uint64_t)(rows * n * 4 + (p->has_weight ? outputs * 4 : 0)),
           (uint64_t)(outputs * 4));
}
