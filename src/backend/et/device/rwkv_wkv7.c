/* RWKV_WKV7 (F32), RWKV-7's state recurrence (graph.h's rwkv_wkv7). Per sequence and head the
 * state has S rows (value channels) of S (key channels); token by token row i becomes
 *   s_i = s_i * w + v_i k + (s_i . a) b,   y_i = s_i . r
 * with the token's head vectors w, k, a, b, r. A row reads only itself and those vectors, so each
 * (sequence, channel row c = h S + i) runs through its sequence's tokens independently of every
 * other: a hart takes a group of 16 consecutive channel rows of one sequence. 16 rows are one
 * cache line of each y column and 16 whole state rows, so when the channels C = S H fill whole
 * lines (C % 16 == 0) of a line-aligned dst, no two harts write one line; for any other shape one
 * hart computes everything (correct, slow: no RWKV model has such heads). */
#include "et_rows.h"

#define ET_WKV7_GROUP 16

typedef struct wkv7_job {
  const float *r, *w, *k, *v, *a, *b; /* [C, T]: token t's head h at t C + h S */
  const float* state_in;              /* [S C, n_s]: sequence s's row c at s S C + c S */
  float* dst;                         /* y [C, T], then the final states laid out as state_in */
  int64_t S, C, T, per_seq;
} wkv7_job;

/* Channel rows [c0, c1) of sequence seq through its tokens, in the CPU's order of operations. The
 * rows are updated in place in dst's state part (their final home), copied there first. */
static void wkv7_rows(const wkv7_job* j, int64_t seq, int64_t c0, int64_t c1) {
  const int64_t S = j->S, C = j->C;
  float* state = j->dst + j->T * C + seq * S * C;
  const float* from = j->state_in + seq * S * C;
  for (int64_t e = c0 * S; e < c1 * S; e++) state[e] = from[e];
  for (int64_t t = seq * j->per_seq; t < (seq + 1) * j->per_seq; t++) {
    for (int64_t c = c0; c < c1; c++) {
      const int64_t head = t * C + c / S * S;
      const float *w = j->w + head, *k = j->k + head, *a = j->a + head, *b = j->b + head, *r = j->r + head;
      float* s = state + c * S;
      float sa = 0.0f;
      for (int64_t x = 0; x < S; x++) sa += a[x] * s[x];
      const float v = j->v[t * C + c];
      float y = 0.0f;
      for (int64_t x = 0; x < S; x++) {
        s[x] = s[x] * w[x] + v * k[x] + sa * b[x];
        y += s[x] * r[x];
      }
      j->dst[t * C + c] = y;
    }
  }
}

static int wkv7_is_head_input(const et_tensor* x, const et_tensor* r) {
  return x->type == ET_TYPE_F32 && et_is_contiguous(x) && x->ne[0] == r->ne[0] && x->ne[1] == r->ne[1] &&
         x->ne[2] == r->ne[2] && x->ne[3] == 1;
}

ET_KERNEL(rwkv_wkv7) {
  const et_rwkv_wkv7_params* p = (const et_rwkv_wkv7_params*)params;
  const et_tensor* in[6] = {&p->r, &p->w, &p->k, &p->v, &p->a, &p->b};
  for (int i = 0; i < 6; i++) {
    et_require(env, wkv7_is_head_input(in[i], &p->r), "rwkv_wkv7: r, w, k, v, a, b must be contiguous F32 [S, H, T]");
  }
  const int64_t S = p->r.ne[0], H = p->r.ne[1], T = p->r.ne[2], C = S * H;
  const et_tensor* st = &p->state;
  const int64_t n_s = st->ne[1];
  et_require(env, st->type == ET_TYPE_F32 && et_is_contiguous(st) && st->ne[0] == S * C && st->ne[2] == 1 &&
                      st->ne[3] == 1 && T % n_s == 0,
             "rwkv_wkv7: state must be contiguous F32 [S*S*H, n_seqs], T a multiple of n_seqs");
  const et_tensor* d = &p->dst;
  et_require(env, d->type == ET_TYPE_F32 && et_is_contiguous(d) && d->ne[0] == C && d->ne[1] == T + S * n_s &&
                      d->ne[2] == 1 && d->ne[3] == 1,
             "rwkv_wkv7: dst must be contiguous F32 [S*H, T + S*n_seqs]");

  /* Units: (sequence, group of 16 rows) when they are line-safe; else one unit of everything. */
  const int line_safe = C % ET_WKV7_GROUP == 0 && d->addr % ET_CACHE_LINE == 0;
  const int64_t groups = line_safe ? C / ET_WKV7_GROUP : 1; /* per sequence */
  const int64_t units = line_safe ? n_s * groups : 1;
  /* Units go to the first hart of every minion before any second one: the minion's two harts
   * share its vector unit, so one unit per minion finishes a small launch soonest. */
  const int64_t t = env->thread_id, nt = env->num_threads;
  const int64_t first = (t % 2) * (nt / 2) + t / 2;
  if (first >= units) return;

  wkv7_job j;
  j.r = (const float*)et_tensor_data(env, &p->r);
  j.w = (const float*)et_tensor_data(env, &p->w);
  j.k = (const float*)et_tensor_data(env, &p->k);
  j.v = (const float*)et_tensor_data(env, &p->v);
  j.a = (const float*)et_tensor_data(env, &p->a);
  j.b = (const float*)et_tensor_data(env, &p->b);
  j.state_in = (const float*)et_tensor_data(env, st);
  j.dst = (float*)et_tensor_data(env, d);
  j.S = S;
  j.C = C;
  j.T = T;
  j.per_seq = T / n_s;
  uint64_t row_steps = 0, group_steps = 0, rows = 0;
  for (int64_t u = first; u < units; u += nt) {
    /* The single unit of an unsafe shape runs every sequence, all C rows. */
    const int64_t seq0 = line_safe ? u / groups : 0, seq1 = line_safe ? seq0 + 1 : n_s;
    const int64_t c0 = line_safe ? u % groups * ET_WKV7_GROUP : 0;
    const int64_t c1 = line_safe ? c0 + ET_WKV7_GROUP : C;
    for (int64_t seq = seq0; seq < seq1; seq++) {
      wkv7_rows(&j, seq, c0, c1);
      rows += (uint64_t)(c1 - c0);
      row_steps += (uint64_t)((c1 - c0) * j.per_seq);
      group_steps += (uint64_t)j.per_seq;
    }
  }
  /* Per row and token: the a dot (2S), the update (5S), the r dot (2S). Per group and token the
   * five head vectors are read; per row the state is read and written once, v read and y
   * written once per token. */
  const uint64_t s = (uint64_t)S;
  et_count(env, 9 * s * row_steps, 4 * (5 * s * group_steps + row_steps + s * rows), 4 * (row_steps + s * rows));
}
