// The ops of recurrent layers. SSM_CONV: the causal depthwise convolution of Mamba and LFM2's
// short-conv blocks, y(c, t, s) = sum_k sx(t + k, c, s) * w(k, c), split over channels (a
// channel's inputs are one contiguous row of sx). RWKV_WKV7: RWKV-7's state recurrence, split
// over (sequence, head) pairs, each running through its tokens in order. GATED_DELTA_NET: the
// gated delta rule of Qwen 3.5's linear-attention layers, split the same way. Both take their
// initial states from a tensor of one column per sequence, or from a sequence store's cells.
#include <cmath>
#include <string>

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

// The initial states of a recurrent op: sequence s starts from column s of `state`, or with a
// cells source (I32 [n_seqs]) from column cells[s] of the store `state` is.
struct InitialStates {
  const Tensor& state;
  const Tensor* cells;

  int64_t n_seqs() const { return cells ? cells->ne[0] : state.ne[1]; }
  // Sequence seq's state; nullptr (reported) for a cell outside the store.
  const float* of(int64_t seq, const Tensor& node, const OpContext& ctx) const {
    const int64_t col = cells ? static_cast<const int32_t*>(cells->data)[seq] : seq;
    if (col >= 0 && col < state.ne[1]) return frow(state, {col, 0, 0});
    ctx.errors.fail(std::string(op_name(node.op)) + ": state cell " + std::to_string(col) + " is outside 0.." +
                    std::to_string(state.ne[1] - 1));
    return nullptr;
  }
};

void compute_wkv7(const Tensor& node, const OpContext& ctx) {
  const float* r = static_cast<const float*>(node.src[0]->data);
  const float* w = static_cast<const float*>(node.src[1]->data);
  const float* k = static_cast<const float*>(node.src[2]->data);
  const float* v = static_cast<const float*>(node.src[3]->data);
  const float* a = static_cast<const float*>(node.src[4]->data);
  const float* b = static_cast<const float*>(node.src[5]->data);
  const InitialStates initial{*node.src[6], node.src[7]};
  const int64_t S = node.src[0]->ne[0], H = node.src[0]->ne[1], T = node.src[0]->ne[2];
  const int64_t n_seqs = initial.n_seqs(), per_seq = T / n_seqs, head = S * S;
  float* y = static_cast<float*>(node.data);
  float* state_out = y + S * H * T;  // after the T output columns: S*S*H per sequence
  const auto [begin, end] = ctx.range(n_seqs * H);
  for (int64_t item = begin; item < end; item++) {
    const int64_t seq = item / H, h = item % H;
    float* st = state_out + seq * head * H + h * head;
    const float* before = initial.of(seq, node, ctx);  // the state before token t
    if (!before) continue;
    before += h * head;
    for (int64_t t = seq * per_seq; t < (seq + 1) * per_seq; t++, before = st) {
      const int64_t off = t * S * H + h * S;  // token t, head h
      for (int64_t i = 0; i < S; i++) {
        const float sa = ctx.k.dot_f32(S, a + off, before + i * S);
        y[off + i] = ctx.k.wkv7_row(S, before + i * S, st + i * S, w + off, k + off, b + off, r + off, v[off + i], sa);
      }
    }
  }
}

void compute_gated_delta_net(const Tensor& node, const OpContext& ctx) {
  const Tensor &q = *node.src[0], &k = *node.src[1], &v = *node.src[2];
  const float* g = static_cast<const float*>(node.src[3]->data);     // [H, T]
  const float* beta = static_cast<const float*>(node.src[4]->data);  // [H, T]
  const InitialStates initial{*node.src[5], node.src[6]};
  const int64_t S = v.ne[0], H = v.ne[1], T = v.ne[2], H_k = q.ne[1];
  const int64_t n_seqs = initial.n_seqs(), per_seq = T / n_seqs, head = S * S;
  const float out_scale = 1.0f / std::sqrt(float(S));
  float* y = static_cast<float*>(node.data);
  float* state_out = y + S * H * T;  // after the T output columns: S*S*H per sequence
  const auto [begin, end] = ctx.range(n_seqs * H);
  for (int64_t item = begin; item < end; item++) {
    const int64_t seq = item / H, h = item % H;
    float* st = state_out + seq * head * H + h * head;  // row i: value channel i over the key channels
    const float* before = initial.of(seq, node, ctx);  // the state before token t
    if (!before) continue;
    before += h * head;
    for (int64_t t = seq * per_seq; t < (seq + 1) * per_seq; t++, before = st) {
      const float* qt = frow(q, {h % H_k, t, 0});
      const float* kt = frow(k, {h % H_k, t, 0});
      const float* vt = frow(v, {h, t, 0});
      const float decay = std::exp(g[t * H + h]), b = beta[t * H + h];
      float* yt = y + t * S * H + h * S;
      for (int64_t i = 0; i < S; i++) {
        // (S k)_i after the decay, then the row's update by the delta beta (v_i - (S k)_i).
        const float d = b * (vt[i] - decay * ctx.k.dot_f32(S, before + i * S, kt));
        yt[i] = ctx.k.delta_row(S, before + i * S, st + i * S, decay, kt, d, qt) * out_scale;
      }
    }
  }
}

}  // namespace

OpImpl impl_gated_delta_net() { return {compute_gated_delta_net, nullptr, nullptr}; }
OpImpl impl_wkv7() { return {compute_wkv7, nullptr, nullptr}; }
OpImpl impl_ssm_conv() { return {compute_ssm_conv, nullptr, nullptr}; }

}  // namespace hart::cpu
