/* PAGED_ATTN (hart's serving attention, not a ggml op): token t of q (Dk, H, n_tok) attends over
 * the KV slots its index entry lists: index[2t] = offset of the list in index, index[2t + 1] =
 * its length; k (Dk, H_kv, n_slots) and v (Dv, H_kv, n_slots) F32 or F16 hold one row per
 * (head, slot). dst (Dv, H, n_tok) F32 = softmax(q k^T * scale) v over the listed slots, with an
 * online softmax; a hart accumulates only the V columns of its own cache lines.
 * Few rows (decode): the query heads that share a KV head (GQA) go to one shire, each head's row
 * split by lines over a few minions of it, so that the shire's L2 brings each K and V row in once
 * for all of them (counted by the group's first head: K by its first piece, V by the columns of
 * each of its pieces) and no two pieces share a minion's vector unit. */
#include "et_attn.h"

#define ET_PA_MAX_D 512

/* Row (h, t) = idx of dst, elements [i0, i1); count_k, count_v: this piece reads the K rows and
 * its V columns from DRAM (else another hart of the shire brought them into its L2). */
static void paged_piece(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1, int count_k,
                        int count_v) {
  const et_paged_attn_params* p = (const et_paged_attn_params*)job->params;
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v;
  const int64_t h = idx[0], t = idx[1];
  const int64_t hk = h / (p->dst.ne[1] / k->ne[1]);
  const int64_t dk = q->ne[0], n_index = p->index.ne[0];
  const int32_t* index = (const int32_t*)et_rows_data(job, &p->index);
  const uint8_t *kdata = et_rows_data(job, k), *vdata = et_rows_data(job, v);
  const int64_t off = index[2 * t], count = index[2 * t + 1];
  et_require(job->env, off >= 0 && count >= 0 && off + count <= n_index, "paged_attn: index list out of range");
  float qv[ET_PA_MAX_D], acc[ET_PA_MAX_D];
  const float* qrow = (const float*)(et_rows_data(job, q) + h * q->nb[1] + t * q->nb[2]);
  for (int64_t i = 0; i < dk; i++) qv[i] = qrow[i] * p->scale;
  et_online_softmax st = et_softmax_begin(acc, i0, i1);
  for (int64_t j = 0; j < count; j++) {
    const int64_t slot = index[off + j];
    et_require(job->env, slot >= 0 && slot < k->ne[2], "paged_attn: slot outside the pool");
    const float s = et_attn_score(qv, kdata + hk * k->nb[1] + slot * k->nb[2], k->type, dk);
    et_softmax_add(&st, s, vdata + hk * v->nb[1] + slot * v->nb[2], v->type);
  }
  et_softmax_end(&st, et_rows_out(job, row));
  /* What this piece did: each listed slot's score over the whole K row, its V row's columns. */
  const uint64_t k_bytes = count_k ? (uint64_t)et_row_bytes(k->type, dk) : 0;
  const uint64_t v_bytes = count_v ? (uint64_t)et_row_bytes(v->type, i1 - i0) : 0;
  et_count(job->env, (uint64_t)(count * (2 * dk + 10) + 2 * (i1 - i0) * count), (uint64_t)count * (k_bytes + v_bytes), 0);
}

static void paged_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  paged_piece(job, row, idx, i0, i1, 1, 1);
}

typedef struct grouped_piece {
  int64_t row, i0, i1;
  int count_k, count_v;
} grouped_piece;

/* The grouped split, when every shire's share of the GQA groups has a minion per head and rows lie
 * on whole lines: 1 and this hart's piece, 0 for none, -1 when the split does not apply. Each row
 * takes `split` minions (the most, a power of two dividing its lines, that the shire has). */
static int grouped(const et_env* env, const et_tensor* d, int64_t group, grouped_piece* out) {
  const int64_t rows = d->ne[1] * d->ne[2], groups = rows / group;
  const int64_t shires = env->num_threads / ET_HARTS_PER_SHIRE, lines = d->ne[0] * 4 / ET_CACHE_LINE;
  if (shires == 0 || d->addr % ET_CACHE_LINE != 0 || d->ne[0] * 4 % ET_CACHE_LINE != 0) return -1;
  const int64_t shire_rows = (groups + shires - 1) / shires * group;
  if (shire_rows > ET_MINIONS_PER_SHIRE) return -1;
  int64_t split = 1;
  while (lines % (2 * split) == 0 && shire_rows * 2 * split <= ET_MINIONS_PER_SHIRE) split *= 2;
  const int64_t shire = env->thread_id / ET_HARTS_PER_SHIRE;
  const int64_t minion = env->thread_id % ET_HARTS_PER_SHIRE / ET_HARTS_PER_MINION;
  const int64_t g0 = shire * groups / shires, g1 = (shire + 1) * groups / shires;
  const int64_t local = minion / split, part = minion % split, width = lines / split * (ET_CACHE_LINE / 4);
  if (env->thread_id % ET_HARTS_PER_MINION != 0 || local >= (g1 - g0) * group) return 0;
  out->row = g0 * group + local; /* rows are (h, t), h fastest: a group's heads are consecutive */
  out->i0 = part * width;
  out->i1 = out->i0 + width;
  out->count_v = local % group == 0;
  out->count_k = out->count_v && part == 0;
  return 1;
}

ET_KERNEL(paged_attn) {
  const et_paged_attn_params* p = (const et_paged_attn_params*)params;
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v, *d = &p->dst;
  et_require(env, q->type == ET_TYPE_F32 && q->nb[0] == 4 && d->type == ET_TYPE_F32, "paged_attn: q and dst must be F32");
  et_require(env, et_is_float_type(k->type) && et_is_float_type(v->type) && k->nb[0] == et_row_bytes(k->type, 1) &&
                      v->nb[0] == et_row_bytes(v->type, 1),
             "paged_attn: k and v must be F32/F16 with contiguous rows");
  et_require(env, q->ne[0] <= ET_PA_MAX_D && v->ne[0] <= ET_PA_MAX_D, "paged_attn: head size above 512");
  et_require(env, k->ne[0] == q->ne[0] && v->ne[1] == k->ne[1] && v->ne[2] == k->ne[2] && q->ne[1] % k->ne[1] == 0,
             "paged_attn: q, k, v shapes do not match");
  et_require(env, d->ne[0] == v->ne[0] && d->ne[1] == q->ne[1] && d->ne[2] == q->ne[2],
             "paged_attn: dst must be (Dv, H, n_tok)");
  et_require(env, p->index.type == ET_TYPE_I32 && p->index.ne[0] >= 2 * q->ne[2], "paged_attn: bad index");
  grouped_piece g;
  const int mine = grouped(env, d, q->ne[1] / k->ne[1], &g);
  if (mine == 0) return;
  if (mine == 1) {
    const et_rows job = et_rows_job(env, p, ET_TENSORS(p), d, 0.0f);
    int64_t idx[3];
    et_row_index(d, g.row, idx);
    paged_piece(&job, g.row, idx, g.i0, g.i1, g.count_k, g.count_v);
    et_count(env, 0, 0, (uint64_t)((g.i1 - g.i0) * 4));
    return;
  }
  const int64_t n = et_run_rows(env, p, ET_TENSORS(p), d, 0, paged_row, 0.0f);
  et_count(env, 0, 0, (uint64_t)(n * 4));
}
