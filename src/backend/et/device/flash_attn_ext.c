/* FLASH_ATTN_EXT: for each (query, head), one pass over the keys with an online softmax
 * (running max, rescaled sum and accumulator). Output row (head h, query q) of dst (Dv, H, n_q, b3);
 * a hart accumulates only the V columns of its own cache lines but needs every score. */
#include "et_attn.h"

/* Row (h, iq, b) = idx of dst. */
static void flash_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_flash_attn_params* p = (const et_flash_attn_params*)job->params;
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v, *m = &p->mask;
  const int64_t h = idx[0], iq = idx[1], b = idx[2];
  const int64_t hk = h / (p->dst.ne[1] / k->ne[2]);
  const int64_t dk = q->ne[0];
  const uint8_t *kdata = et_rows_data(job, k), *vdata = et_rows_data(job, v);
  float qv[ET_ATTN_MAX_D], acc[ET_ATTN_MAX_D];
  const float* qrow = (const float*)(et_rows_data(job, q) + iq * q->nb[1] + h * q->nb[2] + b * q->nb[3]);
  for (int64_t i = 0; i < dk; i++) qv[i] = qrow[i] * p->scale;
  et_online_softmax st = et_softmax_begin(acc, i0, i1);
  const uint8_t* mrow =
      p->has_mask ? et_rows_data(job, m) + iq * m->nb[1] + h % m->ne[2] * m->nb[2] + b % m->ne[3] * m->nb[3] : 0;
  for (int64_t j = 0; j < k->ne[1]; j++) {
    float s = et_attn_score(qv, kdata + j * k->nb[1] + hk * k->nb[2] + b * k->nb[3], k->type, dk);
    if (mrow) s += et_load(mrow, m->type, j);
    et_softmax_add(&st, s, vdata + j * v->nb[1] + hk * v->nb[2] + b * v->nb[3], v->type);
  }
  et_softmax_end(&st, et_rows_out(job, row));
}

ET_KERNEL(flash_attn_ext) {
  const et_flash_attn_params* p = (const et_flash_attn_params*)params;
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v, *d = &p->dst;
  et_flash_attn_check(env, p);
  const int64_t n = et_run_rows(env, p, ET_TENSORS(p), d, 0, flash_row, 0.0f);
  const int64_t rows = (n + d->ne[0] - 1) / d->ne[0];
  const int64_t kv = k->ne[1];
  et_count(env, (uint64_t)(rows * kv * (2 * q->ne[0] + 10) + 2 * n * kv),
           (uint64_t)(rows * kv * (et_row_bytes(k->type, q->ne[0]) + et_row_bytes(v->type, v->ne[0]))),
           (uint64_t)(n * 4));
}
