/* FLASH_ATTN_EXT over an F16 cache with the scores on the matrix engine (head size a multiple of
 * 32, as llama.cpp's ET backend's flash_attn_ext_f16_me): the queries that read one KV head (a
 * GQA group's heads x the queries) go 16 at a time as A, 16 keys at a time as B, and one
 * TensorFMA16A32 per 32 head dimensions gives their 16 x 16 dot products; q is rounded to fp16
 * first, as ggml's CPU does against an F16 cache. The online softmax and the V sums stay on the
 * vector unit (et_attn.h), each hart of the minion taking half of the rows.
 *
 * Per block of 16 keys: the second hart packs the keys (pair-interleaved, as B), the first hart
 * runs the engine and stores the scores into the minion's L2 scratchpad, then both harts fold
 * them into their rows' sums, with a minion barrier between the three. */
#include "et_attn.h"

/* The minion's scratchpad: Q as A (a 16-line panel per 32 dimensions), the keys as B (the same),
 * the 16 x 16 scores, then each row's V accumulator. */
#define FA_PANEL_BYTES (ET_ATTN_MAX_D / 32 * ET_TILE * 64)
#define FA_Q_OFF 0
#define FA_K_OFF FA_PANEL_BYTES
#define FA_S_OFF (2 * FA_PANEL_BYTES)
#define FA_ACC_OFF (FA_S_OFF + ET_TILE * 64)

typedef struct fa_unit {
  int64_t b, hk, r0, rows; /* batch, KV head, first row of the group, rows (16 but at the end) */
} fa_unit;

/* Row r of KV head hk's group: head hk * group + r / n_q, query r % n_q. */
static inline int64_t fa_head(const et_flash_attn_params* p, const fa_unit* u, int64_t r) {
  return u->hk * (p->dst.ne[1] / p->k.ne[2]) + (u->r0 + r) / p->q.ne[1];
}
static inline int64_t fa_query(const et_flash_attn_params* p, const fa_unit* u, int64_t r) { return (u->r0 + r) % p->q.ne[1]; }

/* A: row r's q as fp16, 32 dimensions per panel. */
static void fa_pack_q(const et_flash_attn_params* p, const fa_unit* u, const uint8_t* q, uint8_t* panel) {
  const int64_t dk = p->q.ne[0];
  for (int64_t r = 0; r < u->rows; r++) {
    const float* row = (const float*)(q + fa_query(p, u, r) * p->q.nb[1] + fa_head(p, u, r) * p->q.nb[2] + u->b * p->q.nb[3]);
    for (int64_t i = 0; i < dk; i++) ((uint16_t*)(panel + (i / 32 * ET_TILE + r) * 64))[i % 32] = et_f32_to_f16(row[i]);
  }
}

/* B: line l of panel c holds key j's dimensions (32 c + 2 l, + 1) at 2 j, 2 j + 1; keys past n
 * are zero. */
static void fa_pack_k(const et_flash_attn_params* p, const fa_unit* u, const uint8_t* k, int64_t j0, int64_t n,
                      uint8_t* panel) {
  const int64_t dk = p->k.ne[0];
  for (int64_t j = 0; j < ET_TILE; j++) {
    const uint16_t* row = (const uint16_t*)(k + (j0 + j) * p->k.nb[1] + u->hk * p->k.nb[2] + u->b * p->k.nb[3]);
    for (int64_t i = 0; i < dk; i++) ((uint16_t*)(panel + (i / 32 * ET_TILE + i % 32 / 2) * 64))[2 * j + i % 2] = j < n ? row[i] : 0;
  }
}

static void fa_unit_run(const et_env* env, const et_flash_attn_params* p, const fa_unit* u, uint8_t* const data[5],
                        uint8_t* scratch) {
  const et_tensor *k = &p->k, *v = &p->v, *m = &p->mask;
  const int64_t chunks = p->q.ne[0] / 32, dv = v->ne[0];
  const int64_t half = (u->rows + 1) / 2;
  const int64_t mine0 = env->hart_in_minion ? half : 0, mine1 = env->hart_in_minion ? u->rows : half;
  et_online_softmax st[ET_TILE / 2];
  const float* s = (const float*)(scratch + FA_S_OFF);
  for (int64_t r = mine0; r < mine1; r++) st[r - mine0] = et_softmax_begin((float*)(scratch + FA_ACC_OFF) + r * dv, 0, dv);
  if (env->hart_in_minion == 1) fa_pack_q(p, u, data[0], scratch + FA_Q_OFF);
  for (int64_t j0 = 0; j0 < k->ne[1]; j0 += ET_TILE) {
    const int64_t n = k->ne[1] - j0 < ET_TILE ? k->ne[1] - j0 : ET_TILE;
    if (env->hart_in_minion == 1) fa_pack_k(p, u, data[1], j0, n, scratch + FA_K_OFF);
    et_barrier(env, ET_BARRIER_MINION);
    if (env->hart_in_minion == 0) {
      for (int64_t c = 0; c < chunks; c++) {
        et_tensor_load(env, 0, scratch + FA_Q_OFF + c * ET_TILE * 64, (int)u->rows, 64);
        et_tensor_load(env, ET_TILE, scratch + FA_K_OFF + c * ET_TILE * 64, ET_TILE, 64);
        et_tensor_fma(env, ET_TENSOR_FMA16A32, 0, ET_TILE, (int)u->rows, ET_TILE, c == 0);
      }
      et_tensor_store(env, scratch + FA_S_OFF, (int)u->rows, 64);
    }
    et_barrier(env, ET_BARRIER_MINION);
    for (int64_t r = mine0; r < mine1; r++) {
      const int64_t h = fa_head(p, u, r), iq = fa_query(p, u, r);
      const uint8_t* mrow = p->has_mask ? data[3] + iq * m->nb[1] + h % m->ne[2] * m->nb[2] + u->b % m->ne[3] * m->nb[3] : 0;
      for (int64_t j = 0; j < n; j++) {
        float sc = s[r * ET_TILE + j] * p->scale;
        if (mrow) sc += et_load(mrow, m->type, j0 + j);
        et_softmax_add(&st[r - mine0], sc, data[2] + (j0 + j) * v->nb[1] + u->hk * v->nb[2] + u->b * v->nb[3], v->type);
      }
    }
  }
  for (int64_t r = mine0; r < mine1; r++) {
    const int64_t idx[3] = {fa_head(p, u, r), fa_query(p, u, r), u->b};
    et_softmax_end(&st[r - mine0], (float*)(data[4] + et_row_at(&p->dst, idx)));
  }
  /* Vector work: packing (a lane operation per element), per score the scale, mask and softmax
   * step, per score and V column a multiply-add; DRAM: the group's keys and values once. */
  const int64_t mine = mine1 - mine0, kv = k->ne[1];
  et_count(env,
           (uint64_t)(env->hart_in_minion ? 2 * (u->rows + kv) * p->q.ne[0] : 0) + (uint64_t)(mine * kv * (10 + 2 * dv)),
           (uint64_t)(env->hart_in_minion ? kv * 2 * (p->q.ne[0] + dv) + u->rows * p->q.ne[0] * 4 : 0),
           (uint64_t)(mine * dv * 4));
}

ET_KERNEL(flash_attn_ext_f16_me) {
  const et_flash_attn_params* p = (const et_flash_attn_params*)params;
  const et_tensor *q = &p->q, *k = &p->k, *v = &p->v, *d = &p->dst;
  et_flash_attn_check(env, p);
  et_require(env, k->type == ET_TYPE_F16 && v->type == ET_TYPE_F16 && q->ne[0] % 32 == 0 && v->ne[0] % ET_TILE == 0,
             "flash_attn_ext_f16_me: k and v must be F16, the head sizes multiples of 32 (K) and 16 (V)");
  et_require(env, et_is_contiguous(d) && d->addr % 64 == 0, "flash_attn_ext_f16_me: dst must be contiguous from a line");
  uint8_t* data[5];
  const et_tensor* t = (const et_tensor*)p;
  for (int i = 0; i < 5; i++) data[i] = t[i].ne[0] > 0 ? et_tensor_data(env, &t[i]) : 0;
  const int64_t rows = d->ne[1] / k->ne[2] * q->ne[1]; /* per KV head: its heads x the queries */
  const int64_t row_tiles = (rows + ET_TILE - 1) / ET_TILE;
  const int64_t units = q->ne[3] * k->ne[2] * row_tiles;
  const int64_t minions = env->num_threads / ET_HARTS_PER_MINION;
  for (int64_t i = env->thread_id / ET_HARTS_PER_MINION; i < units; i += minions) {
    fa_unit u;
    u.b = i / (k->ne[2] * row_tiles);
    u.hk = i / row_tiles % k->ne[2];
    u.r0 = i % row_tiles * ET_TILE;
    u.rows = rows - u.r0 < ET_TILE ? rows - u.r0 : ET_TILE;
    fa_unit_run(env, p, &u, data, et_minion_scratch(env));
    et_barrier(env, ET_BARRIER_MINION); /* the next unit's packing reuses the scratchpad */
  }
}
