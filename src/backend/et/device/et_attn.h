/* The online softmax the attention kernels share: scores arrive one key at a time; the running
 * maximum and sum rescale what was accumulated so far, so no score row is ever stored. A hart
 * accumulates only the V columns [i0, i1) it owns. */
#ifndef ET_ATTN_H
#define ET_ATTN_H

#include "et_rows.h"

#define ET_ATTN_MAX_D 512 /* the largest head size (K and V) */

typedef struct et_online_softmax {
  float max, sum;
  int64_t i0, i1;
  float* acc; /* acc[i0 .. i1) */
} et_online_softmax;

static inline et_online_softmax et_softmax_begin(float* acc, int64_t i0, int64_t i1) {
  et_online_softmax st = {-et_inf(), 0.0f, i0, i1, acc};
  for (int64_t i = i0; i < i1; i++) acc[i] = 0.0f;
  return st;
}

/* FLASH_ATTN_EXT's parameter block as et_params.h describes it (both attention kernels). */
static inline void et_flash_attn_check(const et_env* env, const et_flash_attn_params* p) {
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v, *d = &p->dst;
  et_require(env, q->type == ET_TYPE_F32 && q->nb[0] == 4 && d->type == ET_TYPE_F32, "flash_attn_ext: q and dst must be F32");
  et_require(env, et_is_float_type(k->type) && et_is_float_type(v->type) && k->nb[0] == et_row_bytes(k->type, 1) &&
                      v->nb[0] == et_row_bytes(v->type, 1),
             "flash_attn_ext: k and v must be F32/F16 with contiguous rows");
  et_require(env, q->ne[0] <= ET_ATTN_MAX_D && v->ne[0] <= ET_ATTN_MAX_D, "flash_attn_ext: head size above 512");
  et_require(env, k->ne[0] == q->ne[0] && v->ne[1] == k->ne[1] && v->ne[2] == k->ne[2] && q->ne[2] % k->ne[2] == 0,
             "flash_attn_ext: q, k, v shapes do not match");
  et_require(env, d->ne[0] == v->ne[0] && d->ne[1] == q->ne[2] && d->ne[2] == q->ne[1] && d->ne[3] == q->ne[3] &&
                      k->ne[3] == q->ne[3],
             "flash_attn_ext: dst must be (Dv, H, n_q, b3)");
  et_require(env, !p->has_mask || (et_is_float_type(p->mask.type) && p->mask.ne[0] >= k->ne[1] &&
                                   p->mask.ne[1] >= q->ne[1] && p->mask.nb[0] == et_row_bytes(p->mask.type, 1)),
             "flash_attn_ext: mask must cover (n_kv, n_q)");
}

/* q (already scaled) . k row of dk elements (F32 or F16). */
static inline float et_attn_score(const float* qv, const uint8_t* krow, int32_t ktype, int64_t dk) {
  float s = 0.0f;
  for (int64_t i = 0; i < dk; i++) s += qv[i] * et_load(krow, ktype, i);
  return s;
}

/* Adds value row vrow (F32 or F16) with score s; a score of -inf adds nothing. */
static inline void et_softmax_add(et_online_softmax* st, float s, const uint8_t* vrow, int32_t vtype) {
  if (s == -et_inf()) return;
  if (s > st->max) { /* rescale what was accumulated under the old maximum */
    const float f = et_exp(st->max - s);
    for (int64_t i = st->i0; i < st->i1; i++) st->acc[i] *= f;
    st->sum *= f;
    st->max = s;
  }
  const float w = et_exp(s - st->max);
  st->sum += w;
  for (int64_t i = st->i0; i < st->i1; i++) st->acc[i] += w * et_load(vrow, vtype, i);
}

/* out[i0 .. i1) = the weighted average (0 when nothing was added). */
static inline void et_softmax_end(const et_online_softmax* st, float* out) {
  const float inv = st->sum == 0.0f ? 0.0f : et_recip(st->sum);
  for (int64_t i = st->i0; i < st->i1; i++) out[i] = st->acc[i] * inv;
}

#endif
