/* GATED_DELTA_NET (F32), the gated delta rule of Qwen 3.5's linear attention (graph.h's
 * gated_delta_net). Per sequence and value head the state has S rows (value channels) of S (key
 * channels); token by token, with the head's decay e^g, beta and the vectors k, q of its key head,
 * row i becomes
 *   d = beta (v_i - e^g (s_i . k)),   s_i = s_i e^g + d k,   y_i = (s_i . q) / sqrt(S)
 * a row reading only itself and the token's vectors, so the rows split over the harts as
 * et_state.h says. */
#include "et_state.h"

typedef struct gdn_inputs {
  const et_gated_delta_net_params* p;
  const uint8_t *q, *k, *v; /* rows contiguous, any strides */
  const float *g, *beta;    /* [H, T] */
  int64_t H, H_k;
  float out_scale;
} gdn_inputs;

/* F32 row (i1, i2) of a rows-contiguous tensor. */
static const float* gdn_row(const uint8_t* base, const et_tensor* t, int64_t i1, int64_t i2) {
  return (const float*)(base + i1 * t->nb[1] + i2 * t->nb[2]);
}

/* The rows through their tokens, in the CPU's order of operations. A group's rows are mostly of
 * one head: its decay (one e^x) and vectors are fetched when the head changes. */
static void gdn_rows(const et_state_job* j, int64_t seq, int64_t c0, int64_t c1, float* state) {
  const gdn_inputs* in = (const gdn_inputs*)j->inputs;
  const int64_t S = j->S, C = j->C, H = in->H;
  for (int64_t t = seq * j->per_seq; t < (seq + 1) * j->per_seq; t++) {
    int64_t head = -1;
    const float *q = 0, *k = 0, *v = 0;
    float decay = 0.0f, beta = 0.0f;
    for (int64_t c = c0; c < c1; c++) {
      if (c / S != head) {
        head = c / S;
        q = gdn_row(in->q, &in->p->q, head % in->H_k, t);
        k = gdn_row(in->k, &in->p->k, head % in->H_k, t);
        v = gdn_row(in->v, &in->p->v, head, t);
        decay = et_exp(in->g[t * H + head]);
        beta = in->beta[t * H + head];
      }
      float* s = state + c * S;
      float sk = 0.0f;
      for (int64_t x = 0; x < S; x++) sk += s[x] * k[x];
      const float d = beta * (v[c % S] - decay * sk);
      float y = 0.0f;
      for (int64_t x = 0; x < S; x++) {
        s[x] = s[x] * decay + d * k[x];
        y += s[x] * q[x];
      }
      j->dst[t * C + c] = y * in->out_scale;
    }
  }
}

static int gdn_is_rows(const et_tensor* x, int64_t S, int64_t heads, int64_t T) {
  return x->type == ET_TYPE_F32 && x->nb[0] == 4 && x->ne[0] == S && x->ne[1] == heads && x->ne[2] == T &&
         x->ne[3] == 1;
}

static int gdn_is_gate(const et_tensor* x, int64_t H, int64_t T) {
  return x->type == ET_TYPE_F32 && et_is_contiguous(x) && et_nelements(x) == H * T;
}

ET_KERNEL(gated_delta_net) {
  const et_gated_delta_net_params* p = (const et_gated_delta_net_params*)params;
  const int64_t S = p->v.ne[0], H = p->v.ne[1], T = p->v.ne[2], H_k = p->q.ne[1];
  et_require(env, gdn_is_rows(&p->v, S, H, T), "gated_delta_net: v must be F32 rows [S, H, T]");
  et_require(env, H_k >= 1 && H % H_k == 0 && gdn_is_rows(&p->q, S, H_k, T) && gdn_is_rows(&p->k, S, H_k, T),
             "gated_delta_net: q and k must be F32 rows [S, H_k, T], H a multiple of H_k");
  et_require(env, gdn_is_gate(&p->g, H, T) && gdn_is_gate(&p->beta, H, T),
             "gated_delta_net: g and beta must be contiguous F32, one value per head and token");
  et_state_job j;
  if (!et_state_begin(env, &p->state, p->has_cells ? &p->cells : 0, &p->dst, S, S * H, T,
                      "gated_delta_net: state must be contiguous F32 [S*S*H, n_seqs], T a multiple of n_seqs",
                      "gated_delta_net: dst must be contiguous F32 [S*H, T + S*n_seqs]", &j)) {
    return;
  }
  gdn_inputs x;
  x.p = p;
  x.q = et_tensor_data(env, &p->q);
  x.k = et_tensor_data(env, &p->k);
  x.v = et_tensor_data(env, &p->v);
  x.g = (const float*)et_tensor_data(env, &p->g);
  x.beta = (const float*)et_tensor_data(env, &p->beta);
  x.H = H;
  x.H_k = H_k;
  x.out_scale = et_rsqrt((float)(int32_t)S); /* int32: the minion converts no 64-bit integers */
  j.inputs = &x;
  const et_state_work w = et_run_state_rows(env, &j, gdn_rows);
  /* Per row and token: the k dot (2S), the update (3S), the q dot (2S). Per group and token q
   * and k are read with the head's g and beta, and e^g costs as UNARY EXP; per row the state is
   * read and written once, v read and y written once per token. */
  const uint64_t s = (uint64_t)S;
  et_count(env, 7 * s * w.row_steps + 15 * w.group_steps, 4 * ((2 * s + 2) * w.group_steps + w.row_steps + s * w.rows),
           4 * (w.row_steps + s * w.rows));
}
