/* GLU, SwiGLU variant: dst = silu(gate) * up (F32). gate and up may be views (e.g. the two halves
 * of one projection); dst is contiguous with their shape. */
#include "et_rows.h"

typedef struct glu_ctx {
  const et_glu_params* p;
  const uint8_t* gate;
  const uint8_t* up;
  float* dst;
} glu_ctx;

static void glu_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const glu_ctx* ctx = (const glu_ctx*)c;
  const et_glu_params* p = ctx->p;
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const uint8_t* g = ctx->gate + et_row_at(&p->gate, idx);
  const uint8_t* u = ctx->up + et_row_at(&p->up, idx);
  float* out = ctx->dst + row * p->dst.ne[0];
  for (int64_t i = i0; i < i1; i++) {
    out[i] = et_silu(*(const float*)(g + i * p->gate.nb[0])) * *(const float*)(u + i * p->up.nb[0]);
  }
}

ET_KERNEL(glu) {
  const et_glu_params* p = (const et_glu_params*)params;
  et_require(env, p->gate.type == ET_TYPE_F32 && p->up.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "glu: tensors must be F32");
  for (int d = 0; d < 4; d++) {
    et_require(env, p->gate.ne[d] == p->dst.ne[d] && p->up.ne[d] == p->dst.ne[d], "glu: shapes differ");
  }
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  glu_ctx ctx = {p, et_tensor_data(env, &p->gate), et_tensor_data(env, &p->up), (float*)et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->dst.ne[0], glu_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  et_count(env, 20 * n, 8 * n, 4 * n);
}
