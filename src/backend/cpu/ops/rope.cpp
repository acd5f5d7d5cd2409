// ROPE: rotary position embedding, with ggml's numerics: per token, theta_i = pos * base^(-2i/n_dims)
// computed by repeated float multiplication, divided by the optional frequency factor, times
// freq_scale (with YaRN mixed with the unscaled angle by the ramp, graph.h); cos/sin in float, times
// attn_factor. NORMAL rotates pairs (2i, 2i+1), NEOX pairs (i, i + n_dims/2); dims past n_dims are
// copied.
#include <cmath>
#include <cstring>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

struct RopeParams {
  RopeMode mode;
  int n_dims;
  float theta_scale, freq_scale, attn_factor;
  float ext_factor, corr_lo, corr_hi;  // YaRN
  const float* freq_factors;
};

// YaRN's share of the extrapolated angle in pair i (ggml's rope_yarn_ramp).
float yarn_ramp(float lo, float hi, int i) {
  const float y = (float(i) - lo) / std::max(0.001f, hi - lo);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

// cache[i] = cos(theta_i), cache[half + i] = sin(theta_i), i < half = n_dims/2
void fill_cache(const RopeParams& p, float pos, float* cache) {
  const int half = p.n_dims / 2;
  const float mscale = p.attn_factor * (p.ext_factor != 0.0f ? 1.0f + 0.1f * std::log(1.0f / p.freq_scale) : 1.0f);
  float theta = pos;
  for (int i = 0; i < half; i++) {
    const float extrap = theta / (p.freq_factors ? p.freq_factors[i] : 1.0f);
    float t = p.freq_scale * extrap;
    if (p.ext_factor != 0.0f) {
      const float mix = yarn_ramp(p.corr_lo, p.corr_hi, i) * p.ext_factor;
      t = t * (1.0f - mix) + extrap * mix;
    }
    cache[i] = std::cos(t) * mscale;
    cache[half + i] = std::sin(t) * mscale;
    theta *= p.theta_scale;
  }
}

size_t rope_work_size(const Tensor& node, const Kernels&, int nth) {
  return size_t(nth) * align_up(size_t(node.params[1]) * sizeof(float));
}

void compute_rope(const Tensor& node, const OpContext& ctx) {
  // x [d, n_head, n_tok, b3], pos [n_tok] -> y [d, n_head, n_tok, b3]
  const Tensor& x = *node.src[0];
  const Tensor& pos = *node.src[1];
  RopeParams p{};
  p.mode = RopeMode(node.params[0]);
  p.n_dims = node.params[1];
  p.theta_scale = std::pow(node.param_f32(2), -2.0f / float(p.n_dims));
  p.freq_scale = node.param_f32(3);
  p.attn_factor = node.param_f32(4);
  p.ext_factor = node.param_f32(5);
  p.corr_lo = node.param_f32(6);
  p.corr_hi = node.param_f32(7);
  p.freq_factors = node.src[2] ? static_cast<const float*>(node.src[2]->data) : nullptr;
  auto* cache = reinterpret_cast<float*>(ctx.thread_work(size_t(p.n_dims) * sizeof(float)));
  int64_t cached_token = -1;
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    if (r.i2 != cached_token) {  // rows are in order, so the cache is rebuilt once per token
      const int32_t position = *reinterpret_cast<const int32_t*>(static_cast<const char*>(pos.data) + r.i2 * pos.nb[0]);
      fill_cache(p, float(position), cache);
      cached_token = r.i2;
    }
    const float* xr = frow(x, r);
    const int half = p.n_dims / 2;
    ctx.k.rope(half, p.mode == RopeMode::NEOX, cache, cache + half, xr, y);
    if (y != xr) std::memcpy(y + p.n_dims, xr + p.n_dims, size_t(node.ne[0] - p.n_dims) * sizeof(float));
  });
}

}  // namespace

OpImpl impl_rope() { return {compute_rope, rope_work_size, nullptr}; }

}  // namespace hart::cpu
