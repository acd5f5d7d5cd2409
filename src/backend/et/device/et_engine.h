/* MUL_MAT on the minions' matrix engines (et_device.h's tensor instructions), the body of the
 * mul_mat_<type>_matrix_engine kernels. dst (N, M, b2, b3) = W (K, M, a2, a3) x X (K, N, b2, b3)
 * [+ addend], as mul_mat.c, cut into tiles of 16 dst columns (W rows) by 16 dst rows (X rows).
 * The unpacker is the one thing that differs between weight types: W F32, F16 against F16
 * activations (TensorFMA16A32 on the raw halves, K steps of 32), or a block type dequantized to
 * fp32 (TensorFMA32, K steps of 16; the values ggml's dequantization gives).
 *
 * A minion owns a run of tiles and walks their K chunks as a pipeline of steps: its second hart
 * packs step i (16 activation rows and the 16 x K-chunk weight tile, transposed or pair-
 * interleaved as the engine reads B) into one half of a double buffer in the minion's L2
 * scratchpad while its first hart loads step i - 1 from the other half into the L1 scratchpad and
 * runs the engine on it; a minion barrier ends each step. When there are fewer tiles than minions,
 * groups of up to 32 minions of a shire split a tile's K chunks and add their partial C by a
 * TensorReduce tree before the group's first minion stores it. */
#ifndef ET_ENGINE_H
#define ET_ENGINE_H

#include "et_rows.h"

#define ET_ME_A_LINE 0                   /* scratchpad lines of A: the activation rows */
#define ET_ME_B_LINE ET_TILE             /* ... of B: the weight tile */
#define ET_ME_PANEL_BYTES (2 * ET_TILE * 64) /* one step's A and B lines in the L2 scratchpad */

typedef struct et_me_job {
  const et_env* env;
  const et_mul_mat_params* p;
  int half;                   /* TensorFMA16A32 on F16 weights and activations, else TensorFMA32 */
  int64_t chunk;              /* K elements per step: 32 (half) or 16 */
  int64_t chunks, m_tiles, n_tiles;
  int64_t t0, t1, c0, c1;     /* this minion's tiles and K chunks */
  int64_t shire_t0;           /* the first tile of this minion's shire */
  int64_t split, splits;      /* this minion's place in its K-split group */
  const uint8_t *w, *x, *add;
  uint8_t* d;
  uint8_t* scratch;
} et_me_job;

typedef struct et_me_tile {
  int64_t i2, i3, m0, n0, rows; /* dst plane, first column and row, rows (16 but at N's end) */
} et_me_tile;

static inline et_me_tile et_me_tile_at(const et_me_job* j, int64_t t) {
  const et_tensor* d = &j->p->dst;
  et_me_tile r;
  const int64_t plane = t / (j->m_tiles * j->n_tiles);
  r.i2 = plane % d->ne[2];
  r.i3 = plane / d->ne[2];
  r.m0 = t / j->n_tiles % j->m_tiles * ET_TILE;
  r.n0 = t % j->n_tiles * ET_TILE;
  r.rows = d->ne[1] - r.n0 < ET_TILE ? d->ne[1] - r.n0 : ET_TILE;
  return r;
}

/* K elements of chunk c: the chunk size, but at K's end (F16: 16 when K % 32 == 16). */
static inline int64_t et_me_chunk_k(const et_me_job* j, int64_t c) {
  const int64_t left = j->p->src0.ne[0] - c * j->chunk;
  return left < j->chunk ? left : j->chunk;
}

/* Vector lane operations per weight element the packer spends: a move (F32, F16), or unpacking
 * the level, converting, scaling and placing it (block types). */
static inline uint64_t et_me_pack_ops(int32_t type) { return et_is_float_type(type) ? 1 : 4; }

/* The second hart's half of step (tile t, chunk c): A and B into panel. Counts the lane operations
 * as flops (2 each: the cost model's lane-cycle) and, as DRAM traffic, what the shire reads once
 * (as mul_mat.c: its minions share its L2): the weight chunks of each block-row of the shire's
 * tiles, at its first tile there, and the activation chunks of the shire's first row of tiles. */
static inline void et_me_pack(const et_me_job* j, int64_t t, int64_t c, uint8_t* panel) {
  const et_mul_mat_params* p = j->p;
  const et_tensor *w = &p->src0, *x = &p->src1;
  const et_me_tile tile = et_me_tile_at(j, t);
  const int64_t k0 = c * j->chunk, kc = et_me_chunk_k(j, c);
  const uint8_t* xp = j->x + tile.i2 * x->nb[2] + tile.i3 * x->nb[3];
  const uint8_t* wp = j->w + tile.i2 / (x->ne[2] / w->ne[2]) * w->nb[2] + tile.i3 / (x->ne[3] / w->ne[3]) * w->nb[3];
  const int64_t xe = j->half ? 2 : 4;
  for (int64_t r = 0; r < tile.rows; r++) { /* A line r: the activation row's chunk, as stored */
    const uint8_t* src = xp + (tile.n0 + r) * x->nb[1] + k0 * xe;
    for (int64_t b = 0; b < kc * xe; b++) panel[r * 64 + b] = src[b];
  }
  uint8_t* bl = panel + ET_ME_B_LINE * 64;
  for (int64_t m = 0; m < ET_TILE; m++) {
    const uint8_t* row = wp + (tile.m0 + m) * w->nb[1];
    if (j->half) { /* line l: the pairs (w[k0 + 2l], w[k0 + 2l + 1]) of every column m */
      const uint16_t* h = (const uint16_t*)row + k0;
      for (int64_t l = 0; l < kc / 2; l++) {
        ((uint16_t*)(bl + l * 64))[2 * m] = h[2 * l];
        ((uint16_t*)(bl + l * 64))[2 * m + 1] = h[2 * l + 1];
      }
    } else { /* line l: element k0 + l of every column m */
      float v[ET_TILE];
      et_dequant_row(row, w->type, k0, k0 + kc, v);
      for (int64_t l = 0; l < kc; l++) ((float*)(bl + l * 64))[m] = v[l];
    }
  }
  const int64_t w_bytes = ET_TILE * et_row_bytes(w->type, w->ne[0]) * kc / w->ne[0];
  const int new_block_row = t == j->shire_t0 || tile.n0 == 0, in_first_row = t - j->shire_t0 < j->n_tiles;
  et_count(j->env, (uint64_t)(2 * (tile.rows * kc + ET_TILE * kc * (int64_t)et_me_pack_ops(w->type))),
           (uint64_t)((new_block_row ? w_bytes : 0) + (in_first_row ? tile.rows * kc * xe : 0)), 0);
}

/* The first hart's end of tile t: its group's partial C added up (a TensorReduce tree: at each
 * level the split step apart sends to its partner), stored by split 0, plus the addend. */
static inline void et_me_finish(const et_me_job* j, int64_t t) {
  const et_env* env = j->env;
  const et_mul_mat_params* p = j->p;
  const et_me_tile tile = et_me_tile_at(j, t);
  for (int64_t step = 1; step < j->splits; step *= 2) {
    if (j->split % (2 * step) == step) {
      et_tensor_reduce(env, ET_TENSOR_SEND, (int)(env->minion_id - step), (int)tile.rows);
      return;
    }
    if (j->split + step < j->splits) et_tensor_reduce(env, ET_TENSOR_RECV, (int)(env->minion_id + step), (int)tile.rows);
  }
  const et_tensor* d = &p->dst;
  uint8_t* out = j->d + tile.n0 * d->nb[1] + tile.i2 * d->nb[2] + tile.i3 * d->nb[3] + tile.m0 * 4;
  et_tensor_store(env, out, (int)tile.rows, d->nb[1]);
  et_count(env, 0, 0, (uint64_t)(tile.rows * 64));
  if (!p->has_add) return;
  const et_tensor* a = &p->addend;
  for (int64_t r = 0; r < tile.rows; r++) {
    const int64_t idx[3] = {tile.n0 + r, tile.i2, tile.i3};
    const float* arow = (const float*)(j->add + et_row_at(a, idx));
    float* o = (float*)(out + r * d->nb[1]);
    for (int64_t m = 0; m < ET_TILE; m++) o[m] += arow[(tile.m0 + m) % a->ne[0]];
  }
  et_count(env, (uint64_t)(2 * tile.rows * ET_TILE), (uint64_t)(tile.rows * 64 * 2), 0);
}

/* The first hart's step (tile t, chunk c) from panel: A and B into the L1 scratchpad, one
 * TensorFMA (the first of the minion's chunks of the tile starts C afresh). */
static inline void et_me_compute(const et_me_job* j, int64_t t, int64_t c, const uint8_t* panel) {
  const et_env* env = j->env;
  const et_me_tile tile = et_me_tile_at(j, t);
  const int64_t kc = et_me_chunk_k(j, c);
  const int steps = (int)(j->half ? kc / 2 : kc);
  et_tensor_load(env, ET_ME_A_LINE, panel, (int)tile.rows, 64);
  et_tensor_load(env, ET_ME_B_LINE, panel + ET_ME_B_LINE * 64, steps, 64);
  et_tensor_fma(env, j->half ? ET_TENSOR_FMA16A32 : ET_TENSOR_FMA32, ET_ME_A_LINE, ET_ME_B_LINE, (int)tile.rows,
                steps, c == j->c0);
  if (c == j->c1 - 1) et_me_finish(j, t);
}

static inline void et_me_check(const et_env* env, const et_mul_mat_params* p, int32_t wtype) {
  const et_tensor *w = &p->src0, *x = &p->src1, *d = &p->dst;
  const int half = wtype == ET_TYPE_F16;
  et_require(env, w->type == wtype && (!half && wtype != ET_TYPE_F32 ? 1 : w->nb[0] == et_row_bytes(wtype, 1)),
             "mul_mat engine: weights of another type than the kernel's, or rows not contiguous");
  et_require(env, x->type == (half ? ET_TYPE_F16 : ET_TYPE_F32) && x->nb[0] == et_row_bytes(x->type, 1),
             "mul_mat engine: activations must be F32 rows (F16 against F16 weights)");
  et_require(env, !p->has_ids && !p->glu && !p->has_norm, "mul_mat engine: no MUL_MAT_ID, no fused GLU or norm");
  et_require(env, w->ne[1] % ET_TILE == 0 && w->ne[0] % (et_is_block_type(wtype) ? et_block_elems(wtype) : ET_TILE) == 0,
             "mul_mat engine: M must be a multiple of 16 and K of 16 (of the block size)");
  et_require(env, x->ne[0] == w->ne[0] && d->type == ET_TYPE_F32 && d->ne[0] == w->ne[1] && d->ne[1] == x->ne[1] &&
                      d->ne[2] == x->ne[2] && d->ne[3] == x->ne[3] && x->ne[2] % w->ne[2] == 0 &&
                      x->ne[3] % w->ne[3] == 0,
             "mul_mat engine: shapes must be W (K, M, a2, a3), X (K, N, b2, b3), dst F32 (M, N, b2, b3)");
  et_require(env, d->nb[0] == 4 && d->addr % 64 == 0 && d->nb[1] % 64 == 0 && d->nb[2] % 64 == 0 && d->nb[3] % 64 == 0,
             "mul_mat engine: dst rows must start on 64-byte lines");
  if (p->has_add) {
    const et_tensor* a = &p->addend;
    et_require(env, a->type == ET_TYPE_F32 && a->nb[0] == 4, "mul_mat engine: the addend must be F32 rows");
    for (int i = 0; i < 4; i++) {
      et_require(env, a->ne[i] > 0 && d->ne[i] % a->ne[i] == 0, "mul_mat engine: the addend must repeat to dst's shape");
    }
  }
}

static inline void et_engine_mul_mat(const void* params, const et_env* env, int32_t wtype) {
  const et_mul_mat_params* p = (const et_mul_mat_params*)params;
  et_me_check(env, p, wtype);
  et_me_job j;
  j.env = env;
  j.p = p;
  j.half = wtype == ET_TYPE_F16;
  j.chunk = j.half ? 2 * ET_TILE : ET_TILE;
  j.chunks = (p->src0.ne[0] + j.chunk - 1) / j.chunk;
  j.m_tiles = p->dst.ne[0] / ET_TILE;
  j.n_tiles = (p->dst.ne[1] + ET_TILE - 1) / ET_TILE;
  const int64_t tiles = j.m_tiles * j.n_tiles * p->dst.ne[2] * p->dst.ne[3];
  /* Fewer tiles than minions: split K over groups of 2, 4, .. 32 minions (of one shire). */
  const int64_t minions = env->num_threads / ET_HARTS_PER_MINION, g = env->thread_id / ET_HARTS_PER_MINION;
  j.splits = 1;
  while (2 * j.splits <= ET_MINIONS_PER_SHIRE && 2 * j.splits * tiles <= minions && 2 * j.splits <= j.chunks) j.splits *= 2;
  const int64_t groups = minions / j.splits, group = g / j.splits;
  j.split = g % j.splits;
  j.t0 = tiles * group / groups;
  j.t1 = tiles * (group + 1) / groups;
  j.shire_t0 = tiles * ((g - env->minion_id) / j.splits) / groups;
  j.c0 = j.chunks * j.split / j.splits;
  j.c1 = j.chunks * (j.split + 1) / j.splits;
  j.w = et_tensor_data(env, &p->src0);
  j.x = et_tensor_data(env, &p->src1);
  j.d = et_tensor_data(env, &p->dst);
  j.add = p->has_add ? et_tensor_data(env, &p->addend) : 0;
  j.scratch = et_minion_scratch(env);
  const int64_t per_tile = j.c1 - j.c0, steps = (j.t1 - j.t0) * per_tile;
  for (int64_t i = 0; i <= steps; i++) {
    if (env->hart_in_minion == 1 && i < steps) {
      et_me_pack(&j, j.t0 + i / per_tile, j.c0 + i % per_tile, j.scratch + i % 2 * ET_ME_PANEL_BYTES);
    }
    if (env->hart_in_minion == 0 && i > 0) {
      et_me_compute(&j, j.t0 + (i - 1) / per_tile, j.c0 + (i - 1) % per_tile, j.scratch + (i - 1) % 2 * ET_ME_PANEL_BYTES);
    }
    et_barrier(env, ET_BARRIER_MINION);
  }
}

#endif
