/* SUM_ROWS (F32): dst (1, n1, n2, n3) = the sum of each row of src, in element order as the CPU
 * sums (so the result is the CPU's bit for bit). An output is one float: harts own lines of 16
 * outputs, each reading its 16 rows whole. */
#include "et_rows.h"

static void sum_rows_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  (void)i0;
  (void)i1; /* a row of dst is its one element */
  const et_sum_rows_params* p = (const et_sum_rows_params*)job->params;
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  float sum = 0.0f;
  for (int64_t i = 0; i < p->src.ne[0]; i++) sum += x[i];
  et_rows_out(job, row)[0] = sum;
}

ET_KERNEL(sum_rows) {
  const et_sum_rows_params* p = (const et_sum_rows_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32 && p->src.nb[0] == 4,
             "sum_rows: src and dst must be F32 with contiguous rows");
  et_require(env, p->dst.ne[0] == 1 && p->dst.ne[1] == p->src.ne[1] && p->dst.ne[2] == p->src.ne[2] &&
                      p->dst.ne[3] == p->src.ne[3],
             "sum_rows: dst must be (1, rows of src)");
  const uint64_t rows = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 0, sum_rows_row, 0.0f);
  const uint64_t n = (uint64_t)p->src.ne[0];
  et_count(env, rows * n, rows * n * 4, rows * 4);
}
