/* ROPE (ggml modes NORMAL and NEOX, YaRN): rotate pairs of the first n_dims dimensions of each row
 * (head h, token t) by theta_k = freq_scale * pos[t] * freq_base^(-2k / n_dims) / ff_k, ff_k the
 * optional frequency factor k (Llama 3.1's rope_freqs, LongRoPE, Gemma 4), scaled by attn_factor
 * (YaRN: et_params.h); remaining dimensions are copied. NORMAL pairs (2k, 2k + 1), NEOX
 * (k, k + n_dims/2). */
#include "et_rows.h"

/* YaRN's share of the extrapolated angle in pair k (ggml's rope_yarn_ramp). */
static float yarn_ramp(float lo, float hi, int64_t k) {
  const float y = ((float)(int32_t)k - lo) * et_recip(et_fmax(0.001f, hi - lo));
  return 1.0f - et_fmin(1.0f, et_fmax(0.0f, y));
}

/* job->aux = freq_base^(-2 / n_dims) */
static void rope_row(const et_rows* job, int64_t row, const int64_t idx[3], int64_t i0, int64_t i1) {
  const et_rope_params* p = (const et_rope_params*)job->params;
  const uint8_t* x = et_rows_src(job, &p->src, idx);
  const int64_t nb0 = p->src.nb[0];
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
  const float theta_scale = et_pow(p->freq_base, -2.0f * et_recip((float)p->n_dims));
  const uint64_t n = (uint64_t)et_run_rows(env, p, ET_TENSORS(p), &p->dst, 1, rope_row, theta_scale);
  /* A factor costs a reciprocal (10 flops) and a read per rotated element. */
  const uint64_t with_ff = p->has_freq_factors ? 1 : 0;
  et_count(env, (40 + 10 * with_ff) * n, (8 + 4 * with_ff) * n, 4 * n);
}
