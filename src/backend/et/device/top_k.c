/* TOP_K: dst I32 (k, rows of src) = per F32 row of src the indices of its k largest values,
 * largest first, ties to the lower index, in the CPU's total order of floats (float_order_key).
 * Position j of a row's result is the largest element ranked below position j - 1's, so a hart
 * owning positions [i0, i1) of a row walks positions 0 .. i1 - 1, one pass over the row each:
 * O(n i1) compares and no storage, whatever k is (rows are expert scores: n is a few hundred at
 * most, k a few). */
#include "et_rows.h"

/* x's bits as a signed integer ordered as the floats are, -0 below +0 and NaNs at the ends by sign:
 * negative floats have their magnitude bits flipped. */
static inline int32_t top_k_key(float x) {
  const uint32_t u = et_bits(x);
  return (int32_t)(u & 0x80000000u ? u ^ 0x7fffffffu : u);
}

static void top_k_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_top_k_params* p = (const et_top_k_params*)job->params;
  const float* x = (const float*)et_rows_src(job, &p->src, idx);
  const int64_t n = p->src.ne[0];
  int32_t* out = (int32_t*)et_rows_data(job, job->dst) + row * job->dst->ne[0];
  int64_t prev = -1;
  int32_t prev_key = 0;
  for (int64_t j = 0; j < i1; j++) {
    int64_t best = -1;
    int32_t best_key = 0;
    for (int64_t i = 0; i < n; i++) {
      const int32_t key = top_k_key(x[i]);
      const int below_prev = prev < 0 || key < prev_key || (key == prev_key && i > prev);
      if (below_prev && (best < 0 || key > best_key)) { /* strictly greater: ties keep the lower index */
        best = i;
        best_key = key;
      }
    }
    if (j >= i0) out[j] = (int32_t)best;
    prev = best;
    prev_key = best_key;
  }
  /* Per pass and element: the key, two compares; the row read once (it stays in cache). */
  et_count(job->env, (uint64_t)(3 * n * i1), (uint64_t)(4 * n), (uint64_t)(4 * (i1 - i0)));
}

ET_KERNEL(top_k) {
  const et_top_k_params* p = (const et_top_k_params*)params;
  const et_tensor* s = &p->src;
  const et_tensor* d = &p->dst;
  et_require(env, s->type == ET_TYPE_F32 && s->nb[0] == 4 && d->type == ET_TYPE_I32,
             "top_k: src must be F32 with contiguous rows, dst I32");
  et_require(env, d->ne[0] >= 1 && d->ne[0] <= s->ne[0], "top_k: k must be in [1, row length]");
  for (int i = 1; i < 4; i++) et_require(env, d->ne[i] == s->ne[i], "top_k: dst must have src's rows");
  et_run_rows(env, p, ET_TENSORS(p), d, 0, top_k_row, 0.0f);
}
