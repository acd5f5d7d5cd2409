/* GLU: dst = act(gate) * up (F32): SwiGLU with SiLU, GeGLU with GELU (tanh form), ReGLU with ReLU,
 * GeGLU-erf and GeGLU-quick with those GELUs. gate and up
 * may be views (e.g. the two halves of one projection); dst is contiguous with their shape. */
#include "et_rows.h"

static void glu_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_glu_params* p = (const et_glu_params*)job->params;
  const uint8_t* g = et_rows_src(job, &p->gate, idx);
  const uint8_t* u = et_rows_src(job, &p->up, idx);
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) {
    out[i] = et_activate(p->act, *(const float*)(g + i * p->gate.nb[0])) * *(const float*)(u + i * p->up.nb[0]);
  }
}

ET_KERNEL(glu) {
  const et_glu_params* p = (const et_glu_params*)params;
  et_require(env, p->gate.type == ET_TYPE_F32 && p->up.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "glu: tensors must be F32");
  et_require(env, et_is_activation(p->act), "glu: unknown activation");
  for (int d = 0; d < 4; d++) {
    et_require(env, p->gate.ne[d] == p->dst.ne[d] && p->up.ne[d] == p->dst.ne[d], "glu: shapes differ");
  }
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, glu_row, 0.0f);
  et_count(env, 30 * n, 8 * n, 4 * n);
}
