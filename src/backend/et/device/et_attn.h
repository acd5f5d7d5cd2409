/* The online softmax the attention kernels share: scores arrive one key at a time; the running
 * maximum and sum rescale what was accumulated so far, so no score row is ever stored. A hart
 * accumulates only the V columns [i0, i1) it owns. */
#ifndef ET_ATTN_H
#define ET_ATTN_H

#include "et_rows.h"

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
