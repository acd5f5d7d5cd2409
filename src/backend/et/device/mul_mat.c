/* MUL_MAT: dst (N, M, b2, b3) = W (K, N, a2, a3) x X (K, M, b2, b3) [+ addend (MUL_MAT+ADD)].
 * Weights F32, F16, Q8_0 or Q4_0 (dequantized on the fly), activations and output F32. Each hart
 * owns whole cache lines of dst and computes their dot products. */
#include "et_rows.h"

typedef struct mul_mat_ctx {
  const et_mul_mat_params* p;
  const uint8_t* w;
  const uint8_t* x;
  const uint8_t* add; /* 0 without an addend */
  float* dst;
} mul_mat_ctx;

static void mul_mat_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const mul_mat_ctx* ctx = (const mul_mat_ctx*)c;
  const et_tensor* w = &ctx->p->src0;
  const et_tensor* x = &ctx->p->src1;
  const et_tensor* d = &ctx->p->dst;
  int64_t idx[3];
  et_row_index(d, row, idx);
  /* Weight planes broadcast over activation planes: plane i2 reads weight plane i2 / (b2 / a2). */
  const int64_t w_plane = idx[1] / (x->ne[2] / w->ne[2]) * w->nb[2] + idx[2] / (x->ne[3] / w->ne[3]) * w->nb[3];
  const float* xrow = (const float*)(ctx->x + idx[0] * x->nb[1] + idx[1] * x->nb[2] + idx[2] * x->nb[3]);
  float* out = ctx->dst + row * d->ne[0];
  for (int64_t n = i0; n < i1; n++) out[n] = et_dot_row(ctx->w + w_plane + n * w->nb[1], w->type, xrow, w->ne[0]);
  if (!ctx->add) return;
  const et_tensor* a = &ctx->p->addend;
  const uint8_t* arow = ctx->add + et_row_at(a, idx);
  for (int64_t n = i0; n < i1; n++) out[n] += *(const float*)(arow + n % a->ne[0] * a->nb[0]);
}

ET_KERNEL(mul_mat) {
  const et_mul_mat_params* p = (const et_mul_mat_params*)params;
  const et_tensor* w = &p->src0;
  const et_tensor* x = &p->src1;
  const et_tensor* d = &p->dst;
  const int32_t wt = w->type;
  et_require(env, wt == ET_TYPE_F32 || wt == ET_TYPE_F16 || wt == ET_TYPE_Q8_0 || wt == ET_TYPE_Q4_0,
             "mul_mat: weight type must be F32, F16, Q8_0 or Q4_0");
  et_require(env, x->type == ET_TYPE_F32 && d->type == ET_TYPE_F32, "mul_mat: activations and output must be F32");
  et_require(env, et_is_float_type(wt) || w->ne[0] % ET_QK == 0, "mul_mat: K must be a multiple of 32 for block types");
  et_require(env, x->ne[0] == w->ne[0] && x->nb[0] == 4, "mul_mat: activation rows must be K contiguous floats");
  et_require(env, et_is_float_type(wt) ? w->nb[0] == et_row_bytes(wt, 1) : 1, "mul_mat: weight rows must be contiguous");
  et_require(env, d->ne[0] == w->ne[1] && d->ne[1] == x->ne[1] && d->ne[2] == x->ne[2] && d->ne[3] == x->ne[3],
             "mul_mat: output shape must be (N, M, b2, b3)");
  et_require(env, x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0, "mul_mat: weight planes must divide activation planes");
  if (p->has_add) {
    const et_tensor* a = &p->addend;
    et_require(env, a->type == ET_TYPE_F32, "mul_mat: the addend must be F32");
    for (int i = 0; i < 4; i++) {
      et_require(env, a->ne[i] > 0 && d->ne[i] % a->ne[i] == 0, "mul_mat: the addend must repeat to dst's shape");
    }
  }
  const et_range r = et_split_output_elements(env, d); /* decode: one row, every hart */
  if (r.begin == r.end) return;
  mul_mat_ctx ctx = {p, et_tensor_data(env, w), et_tensor_data(env, x), p->has_add ? et_tensor_data(env, &p->addend) : 0,
                     (float*)et_tensor_data(env, d)};
  et_for_rows(r, d->ne[0], mul_mat_row, &ctx);
  /* DRAM traffic estimate: each weight row and activation row this hart touches, once. */
  const int64_t outputs = r.end - r.begin;
  const int64_t k = w->ne[0];
  const int64_t w_rows = outputs < d->ne[0] ? outputs : d->ne[0];
  const int64_t x_rows = (outputs + d->ne[0] - 1) / d->ne[0] + 1;
  et_count(env, (uint64_t)(2 * k * outputs + (p->has_add ? outputs : 0)),
           (uint64_t)(w_rows * et_row_bytes(wt, k) + x_rows * k * 4 + (p->has_add ? outputs * 4 : 0)),
           (uint64_t)(outputs * 4));
}
