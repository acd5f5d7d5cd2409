/* ADD and MUL: dst = src0 op src1 (F32), src1 repeated to src0's shape as in ggml. */
#include "et_rows.h"

typedef struct binary_ctx {
  const et_binary_params* p;
  const uint8_t* a;
  const uint8_t* b;
  float* dst;
} binary_ctx;

static void binary_row(void* c, int64_t row, int64_t i0, int64_t i1) {
  const binary_ctx* ctx = (const binary_ctx*)c;
  const et_binary_params* p = ctx->p;
  int64_t idx[3];
  et_row_index(&p->dst, row, idx);
  const uint8_t* a = ctx->a + et_row_at(&p->src0, idx);
  const uint8_t* b = ctx->b + et_row_at(&p->src1, idx);
  const int64_t na = p->src0.nb[0], nb = p->src1.nb[0], n1 = p->src1.ne[0];
  float* out = ctx->dst + row * p->dst.ne[0];
  if (p->op == ET_BINARY_ADD) {
    for (int64_t i = i0; i < i1; i++) out[i] = *(const float*)(a + i * na) + *(const float*)(b + i % n1 * nb);
  } else {
    for (int64_t i = i0; i < i1; i++) out[i] = *(const float*)(a + i * na) * *(const float*)(b + i % n1 * nb);
  }
}

ET_KERNEL(binary) {
  const et_binary_params* p = (const et_binary_params*)params;
  const et_tensor* a = &p->src0;
  const et_tensor* b = &p->src1;
  et_require(env, a->type == ET_TYPE_F32 && b->type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "binary: tensors must be F32");
  et_require(env, p->op == ET_BINARY_ADD || p->op == ET_BINARY_MUL, "binary: unknown op");
  for (int d = 0; d < 4; d++) {
    et_require(env, p->dst.ne[d] == a->ne[d] && b->ne[d] > 0 && a->ne[d] % b->ne[d] == 0,
               "binary: src1 must repeat to src0's shape");
  }
  const et_range r = et_split_output(env, &p->dst);
  if (r.begin == r.end) return;
  binary_ctx ctx = {p, et_tensor_data(env, a), et_tensor_data(env, b), (float*)et_tensor_data(env, &p->dst)};
  et_for_rows(r, p->dst.ne[0], binary_row, &ctx);
  const uint64_t n = (uint64_t)(r.end - r.begin);
  et_count(env, n, n * 8, n * 4);
}
