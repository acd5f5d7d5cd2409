/* ROPE (ggml modes NORMAL and NEOX, YaRN): rotate pairs of the first n_dims dimensions of each row
 * (head h, token t) by theta_k = freq_scale * pos[t] * freq_base^(-2k / n_dims) / ff_k, ff_k the
 * optional frequency factor k (Llama 3.1's rope_freqs, LongRoPE, Gemma 4), scaled by attn_factor
 * (YaRN: et_params.h); remaining dimensions are copied. NORMAL pairs (2k, 2k + 1), NEOX
 * (k, k + n_dims/2). Optionally the row is RMS-normalized first and the result also stored into a
 * cache (et_params.h: the fusions with RMS_NORM+MUL before and SET_ROWS after). */
#include "et_rows.h"

#define ET_ROPE_MAX_NORM_ROW 512 /* the longest row (head) normalized in front of the rotation */

/* YaRN's share of the extrapolated angle in pair k (ggml's rope_yarn_ramp). */
static float yarn_ramp(float lo, float hi, int64_t k) {
  const float y = ((float)(int32_t)k - lo) * et_recip(et_fmax(0.001f, hi - lo));
  return 1.0f - et_fmin(1.0f, et_fmax(0.0f, y));
}

/* Elements [i0, i1) of dst row `row` into its cache row (dst's flattened rows are the cache's width). */
static void store_row(const et_rows* job, int64_t row, const float* out, int64_t i0, int64_t i1) {
  const et_rope_params* p = (const et_rope_params*)job->params;
  const int64_t ne0 = p->dst.ne[0], width = p->cache.ne[0];
  const int64_t first = row * ne0, r = first / width;
  const uint8_t* ip = et_rows_data(job, &p->store_rows) + r * p->store_rows.nb[0];
  const int64_t slot = p->store_rows.type == ET_TYPE_I64 ? *(const int64_t*)ip : *(const int32_t*)ip;
  et_require(job->env, slot >= 0 && slot < p->cache.ne[1], "rope: cache row index out of range");
  uint8_t* cache = et_rows_data(job, &p->cache) + slot * p->cache.nb[1];
  for (int64_t i = i0; i < i1; i++) et_store(cache, p->cache.type, first % width + i, out[i]);
}

/* job->aux = freq_base^(-2 / n_dims) */
static void rope_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_rope_params* p = (const et_rope_params*)job->params;
  const uint8_t* x = et_rows_src(job, &p->src, idx);
  int64_t nb0 = p->src.nb[0];
  float normed[ET_ROPE_MAX_NORM_ROW];
  if (p->has_norm) {  /* the whole row: x / sqrt(mean(x^2) + eps) * weight, then rotated from here */
    const int64_t n = p->src.ne[0];
    const float* w = (const float*)et_rows_data(job, &p->norm_weight);
    const float scale = et_rms_scale(x, nb0, n, et_recip((float)(int32_t)n), p->norm_eps);
    for (int64_t i = 0; i < n; i++) normed[i] = *(const float*)(x + i * nb0) * scale * w[i];
    x = (const uint8_t*)normed;
    nb0 = 4;
  }
  const int64_t n_dims = p->n_dims, half = n_dims / 2;
  const float p0 = (float)((const int32_t*)et_rows_data(job, &p->pos))[idx[1]];
  const int neox = p->mode == ET_ROPE_NEOX;
  const uint8_t* factors = p->has_freq_factors ? et_rows_data(job, &p->freq_factors) : 0;
  float* out = et_rows_out(job, row);
  /* theta_k = p0 * theta_scale^k by repeated multiplication (as ggml's CPU cache does); k rises
   * within each run, restarting once in NEOX mode. */
  int64_t cur_k = 0;
  float theta = p0;
  for (int64_t i = i0; i < i1; i++) {
    if (i >= n_dims) {
      out[i] = *(const float*)(x + i * nb0);
      continue;
    }
    const int64_t k = neox ? (i < half ? i : i - half) : i / 2;
    const int64_t first = neox ? k : 2 * k;
    const int64_t second = neox ? k + half : 2 * k + 1;
    if (k < cur_k) {
      cur_k = 0;
      theta = p0;
    }
    for (; cur_k < k; cur_k++) theta *= job->aux;
    /* ggml divides by the factor before scaling; the device has no divide, so 1 / ff_k. */
    const float extrap = factors ? theta * et_recip(*(const float*)(factors + k * p->freq_factors.nb[0])) : theta;
    float angle = p->freq_scale * extrap, mscale = p->attn_factor;
    if (p->ext_factor != 0.0f) {
      const float mix = yarn_ramp(p->yarn_lo, p->yarn_hi, k) * p->ext_factor;
      angle = angle * (1.0f - mix) + extrap * mix;
      mscale *= 1.0f + 0.1f * et_log(et_recip(p->freq_scale));
    }
    float s, co;
    et_sincos(angle, &s, &co);
    s *= mscale;
    co *= mscale;
    const float a = *(const float*)(x + first * nb0);
    const float b = *(const float*)(x + second * nb0);
    out[i] = i == first ? a * co - b * s : a * s + b * co;
  }
  if (p->has_store) store_row(job, row, out, i0, i1);
}

/* The fusions' conditions: a norm row fits the local buffer; dst rows and their places in the cache
 * on whole lines, so that a hart's whole rows are whole cache lines there too. */
static void check_fusions(const et_env* env, const et_rope_params* p) {
  const int64_t ne0 = p->dst.ne[0];
  if (p->has_norm) {
    const et_tensor* w = &p->norm_weight;
    et_require(env, ne0 <= ET_ROPE_MAX_NORM_ROW && w->type == ET_TYPE_F32 && w->ne[0] == ne0 && w->nb[0] == 4,
               "rope: the norm takes rows of at most 512 and an F32 weight row as long");
  }
  if (!p->has_store) return;
  const et_tensor *c = &p->cache, *ix = &p->store_rows;
  et_require(env, et_is_float_type(c->type) && et_is_contiguous(c) && c->ne[2] == 1 && c->ne[3] == 1,
             "rope: the cache must be a contiguous F32/F16 matrix");
  et_require(env, c->ne[0] % ne0 == 0 && et_row_bytes(c->type, ne0) % ET_CACHE_LINE == 0 && c->addr % ET_CACHE_LINE == 0 &&
                      p->dst.addr % ET_CACHE_LINE == 0,
             "rope: dst and cache rows must lie on whole 64-byte lines, each cache row whole dst rows");
  et_require(env, (ix->type == ET_TYPE_I32 || ix->type == ET_TYPE_I64) && ix->ne[0] * c->ne[0] == et_nelements(&p->dst),
             "rope: one cache row index per store_width elements of dst");
}

ET_KERNEL(rope) {
  const et_rope_params* p = (const et_rope_params*)params;
  et_require(env, p->src.type == ET_TYPE_F32 && p->dst.type == ET_TYPE_F32, "rope: src and dst must be F32");
  et_require(env, p->pos.type == ET_TYPE_I32 && p->pos.ne[0] == p->src.ne[2], "rope: pos must be I32, one per token");
  et_require(env, p->mode == ET_ROPE_NORMAL || p->mode == ET_ROPE_NEOX, "rope: mode must be NORMAL or NEOX");
  et_require(env, p->n_dims > 0 && p->n_dims % 2 == 0 && p->n_dims <= p->src.ne[0], "rope: bad n_dims");
  for (int d = 0; d < 4; d++) et_require(env, p->src.ne[d] == p->dst.ne[d], "rope: shapes differ");
  const et_tensor* ff = &p->freq_factors;
  et_require(env, !p->has_freq_factors || (ff->type == ET_TYPE_F32 && ff->ne[0] >= p->n_dims / 2),
             "rope: freq_factors must be F32 with n_dims / 2 elements");
  check_fusions(env, p);
  const float theta_scale = et_pow(p->freq_base, -2.0f * et_recip((float)p->n_dims));
  const int whole_rows = p->has_norm || p->has_store;
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, !whole_rows, rope_row, theta_scale);
  if (n == 0) return;
  /* A factor costs a reciprocal (10 flops) and a read per rotated element; the norm 4 flops and
   * its weight; the store its cache bytes and one index per row. */
  const uint64_t with_ff = p->has_freq_factors ? 1 : 0;
  const uint64_t norm = p->has_norm ? 1 : 0, rows = n / (uint64_t)p->dst.ne[0];
  const uint64_t stored = p->has_store ? n * (uint64_t)et_row_bytes(p->cache.type, 1) + rows * 8 : 0;
  et_count(env, (40 + 10 * with_ff + 4 * norm) * n, (8 + 4 * with_ff) * n + norm * 4 * (uint64_t)p->dst.ne[0],
           4 * n + stored);
}
