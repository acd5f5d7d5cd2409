// ROPE: rotary position embedding, with ggml's numerics: per token, theta_i = pos * base^(-2i/n_dims)
// computed by repeated float multiplication, divided by the optional frequency factor, times
// freq_scale; cos/sin in float. NORMAL rotates pairs (2i, 2i+1), NEOX pairs (i, i + n_dims/2);
// dims past n_dims are copied.
#include <cmath>
#include <cstring>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

struct RopeParams {
  RopeMode mode;
  int n_dims;
  float theta_scale, freq_scale;
  const float* freq_factors;
};

// cache[2i] = cos(theta_i), cache[2i + 1] = sin(theta_i), i < n_dims/2
void fill_cache(const RopeParams& p, float pos, float* cache) {
  float theta = pos;
  for (int i = 0; i < p.n_dims / 2; i++) {
    const float ff = p.freq_factors ? p.freq_factors[i] : 1.0f;
    const float t = p.freq_scale * (theta / ff);
    cache[2 * i] = std::cos(t);
    cache[2 * i + 1] = std::sin(t);
    theta *= p.theta_scale;
  }
}

void rotate(const RopeParams& p, const float* cache, const float* x, float* y, int64_t n) {
  // Pair i is (x[a], x[b]): a = 2i, b = 2i + 1 (NORMAL) or a = i, b = i + n_dims/2 (NEOX).
  const int half = p.n_dims / 2;
  const bool neox = p.mode == RopeMode::NEOX;
  for (int i = 0; i < half; i++) {
    const int a = neox ? i : 2 * i;
    const int b = neox ? i + half : 2 * i + 1;
    const float c = cache[2 * i], s = cache[2 * i + 1];
    const float x0 = x[a], x1 = x[b];
    y[a] = x0 * c - x1 * s;
    y[b] = x0 * s + x1 * c;
  }
  std::memcpy(y + p.n_dims, x + p.n_dims, size_t(n - p.n_dims) * sizeof(float));
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
  p.freq_factors = node.src[2] ? static_cast<const float*>(node.src[2]->data) : nullptr;
  auto* cache = reinterpret_cast<float*>(ctx.thread_work(size_t(p.n_dims) * sizeof(float)));
  int64_t cached_token = -1;
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    if (r.i2 != cached_token) {  // rows are in order, so the cache is rebuilt once per token
      const int32_t position = *reinterpret_cast<const int32_t*>(static_cast<const char*>(pos.data) + r.i2 * pos.nb[0]);
      fill_cache(p, float(position), cache);
      cached_token = r.i2;
    }
    rotate(p, cache, frow(x, r), y, node.ne[0]);
  });
}

}  // namespace

OpImpl impl_rope() { return {compute_rope, rope_work_size, nullptr}; }

}  // namespace hart::cpu
