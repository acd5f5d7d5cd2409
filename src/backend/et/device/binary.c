/* ADD, SUB, MUL and DIV: dst = src0 op src1 (F32), src1 repeated to src0's shape as in ggml. DIV is
 * x * et_recip(y) (the minion has no divide): within 2 ulp of x / y. */
#include "et_rows.h"

static void binary_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_binary_params* p = (const et_binary_params*)job->params;
  const uint8_t* a = et_rows_src(job, &p->src0, idx);
  const uint8_t* b = et_rows_src(job, &p->src1, idx);
  const int64_t na = p->src0.nb[0], nb = p->src1.nb[0], n1 = p->src1.ne[0];
  float* out = et_rows_out(job, row);
  for (int64_t i = i0; i < i1; i++) {
    const float x = *(const float*)(a + i * na), y = *(const float*)(b + i % n1 * nb);
    switch (p->op) {
      case ET_BINARY_ADD: out[i] = x + y; break;
      case ET_BINARY_SUB: out[i] = x - y; break;
      case ET_BINARY_MUL: out[i] = x * y; break;
      default: out[i] = et_div(x, y); break;
    }
  }
}

ET_KERNEL(binary) {
  const et_binary_params* p = (const et_binary_params*)params;
  const et_tensor* a = &p->src0;
  const et_tensor* b = &p->src1;
  et_require(env, a->type == ET_TYPE_F32 && b->type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32,
             "binary: tensors must be F32");
  et_require(env, p->op >= ET_BINARY_ADD && p->op <= ET_BINARY_DIV, "binary: unknown op");
  for (int d = 0; d < 4; d++) {
    et_require(env, p->dst.ne[d] == a->ne[d] && b->ne[d] > 0 && a->ne[d] % b->ne[d] == 0,
               "binary: src1 must repeat to src0's shape");
  }
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, binary_row, 0.0f);
  /* DIV: et_recip's three Newton steps (3 flops each) and the product. */
  et_count(env, p->op == ET_BINARY_DIV ? 10 * n : n, n * 8, n * 4);
}
