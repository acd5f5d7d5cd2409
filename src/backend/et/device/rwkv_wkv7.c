/* RWKV_WKV7 (F32), RWKV-7's state recurrence (graph.h's rwkv_wkv7). Per sequence and head the
 * state has S rows (value channels) of S (key channels); token by token row i becomes
 *   s_i = s_i * w + v_i k + (s_i . a) b,   y_i = s_i . r
 * with the token's head vectors w, k, a, b, r: a row reads only itself and those vectors, so the
 * rows split over the harts as et_state.h says. */
#include "et_state.h"

typedef struct wkv7_inputs {
  const float *r, *w, *k, *v, *a, *b; /* [C, T]: token t's head h at t C + h S */
} wkv7_inputs;

/* The rows through their tokens, in the CPU's order of operations. */
static void wkv7_rows(const et_state_job* j, int64_t seq, int64_t c0, int64_t c1, float* state) {
  const wkv7_inputs* in = (const wkv7_inputs*)j->inputs;
  const int64_t S = j->S, C = j->C;
  for (int64_t t = seq * j->per_seq; t < (seq + 1) * j->per_seq; t++) {
    for (int64_t c = c0; c < c1; c++) {
      const int64_t head = t * C + c / S * S;
      const float *w = in->w + head, *k = in->k + head, *a = in->a + head, *b = in->b + head, *r = in->r + head;
      float* s = state + c * S;
      float sa = 0.0f;
      for (int64_t x = 0; x < S; x++) sa += a[x] * s[x];
      const float v = in->v[t * C + c];
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
  const int64_t S = p->r.ne[0], H = p->r.ne[1], T = p->r.ne[2];
  et_state_job j;
  if (!et_state_begin(env, &p->state, p->has_cells ? &p->cells : 0, &p->dst, S, S * H, T,
                      "rwkv_wkv7: state must be contiguous F32 [S*S*H, n_seqs], T a multiple of n_seqs",
                      "rwkv_wkv7: dst must be contiguous F32 [S*H, T + S*n_seqs]", &j)) {
    return;
  }
  wkv7_inputs x;
  x.r = (const float*)et_tensor_data(env, &p->r);
  x.w = (const float*)et_tensor_data(env, &p->w);
  x.k = (const float*)et_tensor_data(env, &p->k);
  x.v = (const float*)et_tensor_data(env, &p->v);
  x.a = (const float*)et_tensor_data(env, &p->a);
  x.b = (const float*)et_tensor_data(env, &p->b);
  j.inputs = &x;
  const et_state_work w = et_run_state_rows(env, &j, wkv7_rows);
  /* Per row and token: the a dot (2S), the update (5S), the r dot (2S). Per group and token the
   * five head vectors are read; per row the state is read and written once, v read and y
   * written once per token. */
  const uint64_t s = (uint64_t)S;
  et_count(env, 9 * s * w.row_steps, 4 * (5 * s * w.group_steps + w.row_steps + s * w.rows),
           4 * (w.row_steps + s * w.rows));
}
