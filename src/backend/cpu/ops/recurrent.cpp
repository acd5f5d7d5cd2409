// The ops of recurrent layers. SSM_CONV: the causal depthwise convolution of Mamba and LFM2's
// short-conv blocks, y(c, t, s) = sum_k sx(t + k, c, s) * w(k, c), split over channels (a
// channel's inputs are one contiguous row of sx).
#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

void compute_ssm_conv(const Tensor& node, const OpContext& ctx) {
  const Tensor& sx = *node.src[0];  // (K-1+n_t, C, n_s)
  const Tensor& w = *node.src[1];   // (K, C)
  const int64_t k = w.ne[0], n_t = node.ne[1], n_s = node.ne[2];
  const auto [c0, c1] = ctx.range(node.ne[0]);
  for (int64_t s = 0; s < n_s; s++)
    for (int64_t c = c0; c < c1; c++) {
      const float* x = frow(sx, {c, s, 0});
      const float* wc = frow(w, {c, 0, 0});
      for (int64_t t = 0; t < n_t; t++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < k; i++) sum += x[t + i] * wc[i];
        reinterpret_cast<float*>(row_ptr(node, t, s, 0))[c] = sum;
      }
    }
}

}  // namespace

OpImpl impl_ssm_conv() { return {compute_ssm_conv, nullptr, nullptr}; }

}  // namespace hart::cpu
