/* SCALE: dst = src * scale + bias (F32). */
#include "et_rows.h"

typedef struct scale_ctx {
  const et_scale_params* p;
  const uint8_t* src;
  float* dst;
} scale_ctx;

static void scale_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const scale_ctx* ctx = (const scale_ctx*)c;
  const et_scale_params* p = ctx->p;
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const uint8_t* x = ctx->src + et_row_at(&p->src, idx);
  float* out = ctx->dst + row * p->dst.ne[0];
  for (int64_t i = i0; i < i1; i++) out[i] = *(const float*)(x + i * p->src.nb[0]) * p->scale + p->bias;
}

ET_KERNEL(scale) {
  const et_scale_params* p = (const et_scale_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32, "scale: tensors must be F32");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "scale: shapes differ");
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  scale_ctx ctx = {p, et_tensor_data(env, &p->src), (float*)et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->dst.ne[0], scale_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  et_count(env, 2 * n, 4 * n, 4 * n);
}
