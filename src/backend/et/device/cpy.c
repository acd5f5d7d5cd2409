/* CPY / CONT: dst (contiguous, F32 or F16) = src (any strides, F32 or F16), element by element in
 * row-major order of src's own shape (the two shapes may differ; the element counts agree). */
#include "et_rows.h"

typedef struct cpy_ctx {
  const et_cpy_params* p;
  const uint8_t* src;
  uint8_t* dst;
} cpy_ctx;

static void cpy_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const cpy_ctx* ctx = (const cpy_ctx*)c;
  const et_tensor* s = &ctx->p->src;
  const et_tensor* d = &ctx->p->dst;
  const int64_t base = row * d->ne[0];
  /* Walk src in its own row-major order starting from flat index base + i0. */
  int64_t flat = base + i0;
  while (flat < base + i1) {
    int64_t idx[3];
    et_row_index(s, flat / s->ne[0], idx);
    const uint8_t* x = ctx->src + idx[0] * s->nb[1] + idx[1] * s->nb[2] + idx[2] * s->nb[3];
    const int64_t j0 = flat % s->ne[0];
    const int64_t run = s->ne[0] - j0 < base + i1 - flat ? s->ne[0] - j0 : base + i1 - flat;
    for (int64_t j = 0; j < run; j++) {
      et_store(ctx->dst, d->type, flat + j, et_load(x + (j0 + j) * s->nb[0], s->type, 0));
    }
    flat += run;
  }
}

ET_KERNEL(cpy) {
  const et_cpy_params* p = (const et_cpy_params*)params;
  et_require(env, et_is_float_type(p->src.type) && et_is_float_type(p->dst.type), "cpy: types must be F32 or F16");
  et_require(env, et_nelements(&p->src) == et_nelements(&p->dst), "cpy: element counts differ");
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  cpy_ctx ctx = {p, et_tensor_data(env, &p->src), et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->dst.ne[0], cpy_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  et_count(env, 0, n * (uint64_t)et_row_bytes(p->src.type, 1), n * (uint64_t)et_row_bytes(p->dst.type, 1));
}
