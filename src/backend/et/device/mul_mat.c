/* MUL_MAT: dst (N, M, b2, b3) = W (K, N, a2, a3) x X (K, M, b2, b3) [+ addend (MUL_MAT+ADD)]
 * [or act(W x) * (U x) (a gate and up projection with their GLU)], X [RMS-normalized first].
 * MUL_MAT_ID (has_ids): dst (N, U, T) column (i, t) = expert ids(i, t) of W (K, N, E) x X row
 * (i % X.ne[1], t), X (K, 1 | U, T): the same dot products, each output row choosing its plane.
 * Weights F32, F16 or a block type of et_blocks.h (dequantized on the fly), activations F32 (F16
 * against float weights), output F32. Each hart owns whole cache lines of dst and computes their
 * dot products. */
#include "et_rows.h"

/* The weight plane output row idx reads: its expert, or plane i2 / (b2 / a2), i3 / (b3 / a3)
 * (weight planes broadcast over activation planes). */
static const uint8_t* mul_mat_plane(const et_rows* job, const et_mul_mat_params* p, const int64_t idx[3]) {
  const et_tensor* w = &p->src0;
  const et_tensor* x = &p->src1;
  if (!p->has_ids) {
    return et_rows_data(job, w) + idx[1] / (x->ne[2] / w->ne[2]) * w->nb[2] + idx[2] / (x->ne[3] / w->ne[3]) * w->nb[3];
  }
  const et_tensor* ids = &p->ids;
  const int32_t e = *(const int32_t*)(et_rows_data(job, ids) + idx[0] * ids->nb[0] + idx[1] * ids->nb[1]);
  et_require(job->env, e >= 0 && e < w->ne[2], "mul_mat: expert id out of range");
  return et_rows_data(job, w) + e * w->nb[2];
}

/* An F32 activation row, normalized first when an RMS_NORM+MUL is folded in (has_norm). */
typedef struct normed_row {
  const float* x;
  const float* weight; /* 0: x as it is */
  float scale;
} normed_row;

/* x * et_rms_scale * weight as the RMS_NORM kernel computes it, bit for bit, a piece at a time
 * (ET_NORM_PIECE: a multiple of every block size). */
#define ET_NORM_PIECE 256

static normed_row normed(const et_rows* job, const et_mul_mat_params* p, const uint8_t* xrow) {
  normed_row r = {(const float*)xrow, 0, 1.0f};
  if (!p->has_norm) return r;
  const int64_t k = p->src1.ne[0];
  r.scale = et_rms_scale(xrow, 4, k, et_recip((float)(int32_t)k), p->norm_eps);
  r.weight = (const float*)et_rows_data(job, &p->norm_weight);
  return r;
}

static float dot(const uint8_t* wrow, int32_t type, const normed_row* x, int64_t k) {
  if (!x->weight) return et_dot_row(wrow, type, x->x, k);
  float piece[ET_NORM_PIECE], sum = 0.0f;
  for (int64_t c = 0; c < k; c += ET_NORM_PIECE) {
    const int64_t len = k - c < ET_NORM_PIECE ? k - c : ET_NORM_PIECE;
    for (int64_t i = 0; i < len; i++) piece[i] = x->x[c + i] * x->scale * x->weight[c + i];
    sum = et_dot_row_from(sum, wrow + et_row_bytes(type, c), type, piece, len);
  }
  return sum;
}

static void mul_mat_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_mul_mat_params* p = (const et_mul_mat_params*)job->params;
  const et_tensor* w = &p->src0;
  const int64_t k = w->ne[0];
  const uint8_t* wdata = mul_mat_plane(job, p, idx);
  /* MUL_MAT_ID's X row (i % ne1, t) is this index, taken modulo X's extents. */
  const uint8_t* xrow = et_rows_src(job, &p->src1, idx);
  float* out = et_rows_out(job, row);
  if (p->src1.type == ET_TYPE_F16) {  /* float weights (checked) */
    for (int64_t n = i0; n < i1; n++) {
      float sum = 0.0f;
      for (int64_t i = 0; i < k; i++) sum += et_load(wdata + n * w->nb[1], w->type, i) * et_load(xrow, ET_TYPE_F16, i);
      out[n] = sum;
    }
  } else if (p->glu) {  /* the up projection's row beside the gate's, both over the same xrow */
    const normed_row x = normed(job, p, xrow);
    const uint8_t* udata = et_rows_data(job, &p->up) + (wdata - et_rows_data(job, w));
    for (int64_t n = i0; n < i1; n++) {
      const float gate = dot(wdata + n * w->nb[1], w->type, &x, k);
      out[n] = et_activate(p->glu - 1, gate) * dot(udata + n * w->nb[1], w->type, &x, k);
    }
  } else {
    const normed_row x = normed(job, p, xrow);
    for (int64_t n = i0; n < i1; n++) out[n] = dot(wdata + n * w->nb[1], w->type, &x, k);
  }
  if (!p->has_add) return;
  const et_tensor* a = &p->addend;
  const uint8_t* arow = et_rows_src(job, a, idx);
  for (int64_t n = i0; n < i1; n++) out[n] += *(const float*)(arow + n % a->ne[0] * a->nb[0]);
}

/* MUL_MAT_ID's shapes: experts (K, N, E), X (K, 1 | U, T), ids I32 (U, T), dst (N, U, T). */
static void mul_mat_id_check(const et_env* env, const et_mul_mat_params* p) {
  const et_tensor *w = &p->src0, *x = &p->src1, *d = &p->dst, *ids = &p->ids;
  et_require(env, !p->has_add, "mul_mat: MUL_MAT_ID takes no addend");
  et_require(env, ids->type == ET_TYPE_I32 && ids->ne[0] == d->ne[1] && ids->ne[1] == d->ne[2] && ids->ne[2] == 1 &&
                      ids->ne[3] == 1,
             "mul_mat: ids must be I32 (U, T) for dst (N, U, T)");
  et_require(env, d->ne[0] == w->ne[1] && d->ne[3] == 1 && w->ne[3] == 1 && (x->ne[1] == 1 || x->ne[1] == d->ne[1]) &&
                      x->ne[2] == d->ne[2] && x->ne[3] == 1,
             "mul_mat: MUL_MAT_ID shapes must be experts (K, N, E), X (K, 1 | U, T), dst (N, U, T)");
}

ET_KERNEL(mul_mat) {
  const et_mul_mat_params* p = (const et_mul_mat_params*)params;
  const et_tensor* w = &p->src0;
  const et_tensor* x = &p->src1;
  const et_tensor* d = &p->dst;
  const int32_t wt = w->type;
  et_require(env, et_is_float_type(wt) || et_is_block_type(wt),
             "mul_mat: weight type must be F32, F16 or a block type");
  et_require(env, (x->type == ET_TYPE_F32 || (x->type == ET_TYPE_F16 && et_is_float_type(wt) && !p->has_ids)) &&
                      d->type == ET_TYPE_F32,
             "mul_mat: activations must be F32 (F16 against float weights) and output F32");
  et_require(env, et_is_float_type(wt) || w->ne[0] % et_block_elems(wt) == 0,
             "mul_mat: K must be a multiple of the block size (32, 256 for K-quants)");
  et_require(env, x->ne[0] == w->ne[0] && x->nb[0] == et_row_bytes(x->type, 1),
             "mul_mat: activation rows must be K contiguous values");
  et_require(env, et_is_float_type(wt) ? w->nb[0] == et_row_bytes(wt, 1) : 1, "mul_mat: weight rows must be contiguous");
  if (p->glu) {
    const et_tensor* u = &p->up;
    et_require(env, !p->has_add && !p->has_ids && et_is_activation(p->glu - 1) && x->type == ET_TYPE_F32,
               "mul_mat: a fused GLU takes a known activation, F32 activations, no addend and no ids");
    for (int i = 0; i < 4; i++) et_require(env, u->ne[i] == w->ne[i] && u->nb[i] == w->nb[i], "mul_mat: up must be laid out as src0");
    et_require(env, u->type == wt, "mul_mat: up must have src0's type");
  }
  if (p->has_norm) {
    const et_tensor* nw = &p->norm_weight;
    et_require(env, x->type == ET_TYPE_F32 && !p->has_ids && nw->type == ET_TYPE_F32 && nw->ne[0] == w->ne[0] && nw->nb[0] == 4,
               "mul_mat: a folded norm takes F32 activations, no ids and an F32 weight row of K");
  }
  if (p->has_ids) {
    mul_mat_id_check(env, p);
  } else {
    et_require(env, d->ne[0] == w->ne[1] && d->ne[1] == x->ne[1] && d->ne[2] == x->ne[2] && d->ne[3] == x->ne[3],
               "mul_mat: output shape must be (N, M, b2, b3)");
    et_require(env, x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0,
               "mul_mat: weight planes must divide activation planes");
  }
  if (p->has_add) {
    const et_tensor* a = &p->addend;
    et_require(env, a->type == ET_TYPE_F32, "mul_mat: the addend must be F32");
    for (int i = 0; i < 4; i++) {
      et_require(env, a->ne[i] > 0 && d->ne[i] % a->ne[i] == 0, "mul_mat: the addend must repeat to dst's shape");
    }
  }
  /* Outputs are independent: cut on any line, so that a decode step's single row spreads over every hart. */
  const int64_t outputs = et_run_rows(env, p, ET_TENSORS(p), d, 1, mul_mat_row, 0.0f);
  if (outputs == 0) return;
  /* DRAM traffic estimate: each weight row this hart touches, once; each activation row once per
   * shire, whose harts share its L2 (a row an earlier hart of the shire touched is there: a decode
   * step's single row is read by every hart with outputs), unless an earlier call of this phase
   * brought it there (x_shared). Each output row of MUL_MAT_ID may bring another expert's rows, up
   * to every expert's; a fused GLU reads two weight rows per output. */
  const int64_t k = w->ne[0], n = d->ne[0];
  const et_range r = et_split_output_elements(env, d);
  const et_range shire = et_split_lines_at(env->thread_id - env->thread_id % ET_HARTS_PER_SHIRE, env->num_threads,
                                           d->addr, et_nelements(d), 4, 1);
  const int64_t rows = (r.end - 1) / n - r.begin / n + 1; /* rows this hart touches */
  const int64_t x_rows = p->x_shared ? 0 : rows - (r.begin % n != 0 && r.begin != shire.begin);
  const int64_t planes = p->has_ids ? (rows < w->ne[2] ? rows : w->ne[2]) : 1;
  const int64_t products = p->glu ? 2 : 1, norm = p->has_norm ? 1 : 0;
  const int64_t w_rows = (outputs < n * planes ? outputs : n * planes) * products;
  /* A folded norm: a row's sum of squares, and each product's 2 multiplies per element. */
  const int64_t per_output = products * (2 + 2 * norm) * k + (p->glu ? (int64_t)et_activation_flops(p->glu - 1) + 1 : 0);
  et_count(env, (uint64_t)(per_output * outputs + norm * rows * 2 * k + (p->has_add ? outputs : 0)),
           (uint64_t)(w_rows * et_row_bytes(wt, k) + x_rows * k * 4 * (1 + norm) + (p->has_add ? outputs * 4 : 0)),
           (uint64_t)(outputs * 4));
}
