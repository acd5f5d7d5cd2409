// Building a compute graph: a Context owns tensor metadata; the builder functions below create
// nodes (no computation happens until a backend computes the Graph). Shapes are checked here,
// once, so kernels may trust them.
//
//   Context ctx;
//   Tensor* x = ctx.new_tensor(Type::F32, {64, 8});        // input
//   Tensor* y = mul_mat(ctx, w, x);                         // W (64,n) @ x -> y (n, 8)
//   Graph g = build_graph({y});
#pragma once

#include <deque>
#include <initializer_list>
#include <span>
#include <vector>

#include "graph/tensor.h"

namespace hart {

class Context {
 public:
  Tensor* new_tensor(Type type, std::initializer_list<int64_t> ne);
  Tensor* new_tensor(Type type, std::span<const int64_t> ne);
  // A tensor describing memory that already exists (weights, caches): no planning needed.
  Tensor* new_leaf(Type type, std::span<const int64_t> ne, void* data);
  size_t size() const { return tensors_.size(); }

 private:
  std::deque<Tensor> tensors_;  // stable addresses
};

// ---- views (no computation) ------------------------------------------------------------------
Tensor* reshape(Context& c, Tensor* a, std::initializer_list<int64_t> ne);  // a contiguous
// A strided view: sizes ne, strides nb (nb[0] is implied by the type), byte offset into a.
Tensor* view(Context& c, Tensor* a, std::initializer_list<int64_t> ne,
             std::initializer_list<size_t> nb, size_t offset);
Tensor* permute(Context& c, Tensor* a, int ax0, int ax1, int ax2, int ax3);  // as ggml_permute
Tensor* transpose(Context& c, Tensor* a);
// True for the ops above (RESHAPE, VIEW, PERMUTE, TRANSPOSE), which only reinterpret memory.
bool is_view_op(Op op);
// The node whose computation produced t's bytes: t itself, or the source its views start from.
Tensor* producer(Tensor* t);

// ---- ops -------------------------------------------------------------------------------------
Tensor* get_rows(Context& c, Tensor* table, Tensor* ids);                    // -> F32
// -> view of dst. `after`: a node that must compute before this write (a read of the same rows
// that nothing else orders before it); kernels ignore it.
Tensor* set_rows(Context& c, Tensor* dst, Tensor* src, Tensor* ids, Tensor* after = nullptr);
Tensor* cpy(Context& c, Tensor* src, Tensor* dst);                            // -> view of dst
Tensor* cont(Context& c, Tensor* a);
// a and b (F32) joined along `dim`; every other size equal -> F32.
Tensor* concat(Context& c, Tensor* a, Tensor* b, int dim);
Tensor* add(Context& c, Tensor* a, Tensor* b);
Tensor* sub(Context& c, Tensor* a, Tensor* b);
Tensor* mul(Context& c, Tensor* a, Tensor* b);
Tensor* div(Context& c, Tensor* a, Tensor* b);
Tensor* scale(Context& c, Tensor* a, float s, float bias = 0.0f);  // a * s + bias (ggml_scale_bias)
Tensor* unary(Context& c, Tensor* a, Unary kind);
Tensor* clamp(Context& c, Tensor* a, float min, float max);  // element-wise min(max(x, min), max)
Tensor* glu(Context& c, Tensor* gate, Tensor* up, Glu kind);
Tensor* rms_norm(Context& c, Tensor* a, float eps);
Tensor* norm(Context& c, Tensor* a, float eps);     // per row: (x - mean) / sqrt(var + eps)
Tensor* l2_norm(Context& c, Tensor* a, float eps);  // per row: x / max(sqrt(sum x^2), eps)
Tensor* sum_rows(Context& c, Tensor* a);            // [n, ...] -> [1, ...]
// Per row of a (F32 [n, ...]) the indices of its k largest values, largest first -> I32 [k, ...]
// (ggml_argsort_top_k: the first k of a descending argsort; ties keep the lower index first).
Tensor* top_k(Context& c, Tensor* a, int k);
// softmax(a * scale + slope * mask) per row, as ggml_soft_max_ext: the mask (F32 or F16) broadcasts
// over a's dims 2 and 3; slope is 1, or with max_bias > 0 ALiBi's slope of head i2 of a->ne[2]
// (alibi_slope); sinks F32 [a->ne[2]] (gpt-oss): one more logit per head that takes its share of
// the denominator but has no output.
Tensor* soft_max(Context& c, Tensor* a, Tensor* mask, float scale, float max_bias, Tensor* sinks = nullptr);
// ALiBi's slope for head h of n_head (ggml): the first n_head_log2 = 2^floor(log2 n_head) heads
// m0^(h+1), the rest m1^(2(h - n_head_log2) + 1), m0 = 2^(-max_bias / n_head_log2), m1 = sqrt(m0).
float alibi_slope(float max_bias, int64_t h, int64_t n_head);
// YaRN (ggml_rope_ext's last five arguments): with ext_factor != 0 the angle of pair i mixes the
// interpolated freq_scale * theta and the extrapolated theta by ext_factor * ramp(i), the ramp
// falling from 1 to 0 between the pairs whose wavelengths fit beta_fast and beta_slow rotations in
// n_ctx_orig positions, and cos and sin take the factor 1 + 0.1 ln(1 / freq_scale).
struct RopeYarn {
  float ext_factor = 0.0f;
  int n_ctx_orig = 0;
  float beta_fast = 32.0f, beta_slow = 1.0f;
};
// attn_factor multiplies cos and sin (ggml's mscale: LongRoPE's attention factor).
Tensor* rope(Context& c, Tensor* a, Tensor* pos, Tensor* freq_factors, RopeMode mode,
             int n_dims, float freq_base, float freq_scale, float attn_factor = 1.0f, const RopeYarn& yarn = {});
Tensor* mul_mat(Context& c, Tensor* w, Tensor* x);
// The experts' matrix products of a mixture of experts (ggml_mul_mat_id): experts [k, n, n_expert]
// (weights, any MUL_MAT type), x F32 [k, n_b, T] with n_b 1 (every expert of a token reads the
// same row) or n_used, ids I32 [n_used, T] (any strides: a top_k view) ->
// y F32 [n, n_used, T] with y(:, i, t) = experts(:, :, ids(i, t)) @ x(:, i % n_b, t).
Tensor* mul_mat_id(Context& c, Tensor* experts, Tensor* x, Tensor* ids);
Tensor* flash_attn_ext(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale);
// Attention of tokens from many sequences over one pool of KV slots (k, v [d, n_head_kv, n_slots]).
// index I32 [>= 2*n_tok]: token t attends, with softmax(q·kᵀ·scale), the slots listed at
// index[off .. off + count) where (off, count) = (index[2t], index[2t+1]); causality is in the
// lists (a token at position p of a sequence lists the slots of positions 0..p).
Tensor* paged_attn(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* index, float scale);

// The causal depthwise convolution of Mamba / LFM2 (ggml_ssm_conv): sx (K-1+n_t, C, n_s) holds
// for each of n_s sequences and C channels the K-1 inputs before this step and the step's n_t,
// kernel (K, C): y(c, t, s) = sum_k sx(t + k, c, s) * kernel(k, c) -> (C, n_t, n_s).
Tensor* ssm_conv(Context& c, Tensor* sx, Tensor* kernel);

// RWKV-7's WKV recurrence (ggml_rwkv_wkv7) for n_s sequences of T / n_s tokens each, H heads of
// S channels: per head a state S (S x S, row i for value channel i) starting from `state` and,
// token by token, S = S diag(w) + v k^T + (S a) b^T, y = S r. r, w, k, v, a, b F32 [S, H, T]
// (contiguous), state F32 [S*S*H, n_s]. The result F32 [S*H, T + S*n_s] holds y (the first T
// columns) and each sequence's final state (then S columns per sequence).
// With `cells` (I32 [n_s]), `state` is a store [S*S*H, n_cells] and sequence s starts from its
// column cells[s]: the op reads a sequence store's cells itself, no GET_ROWS copy before it.
Tensor* rwkv_wkv7(Context& c, Tensor* r, Tensor* w, Tensor* k, Tensor* v, Tensor* a, Tensor* b, Tensor* state,
                  Tensor* cells = nullptr);

// The gated delta rule (ggml_gated_delta_net with scalar gates) for n_s sequences of T / n_s
// tokens each, H value heads of S channels, H_k key heads (H a multiple of H_k; value head h
// reads key head h % H_k): per head a state S (S x S, row i for value channel i) starting from
// `state` and, token by token,
//   S *= exp(g);  S += (beta (v - S k)) k^T;  y = S q / sqrt(S).
// q, k F32 [S, H_k, T], v F32 [S, H, T] (rows contiguous, any strides), g and beta F32
// [H, T] contiguous, state F32 [S*S*H, n_s]. The result F32 [S*H, T + S*n_s] holds y (the first
// T columns) and each sequence's final state (then S columns per sequence). `cells`: as
// rwkv_wkv7's.
Tensor* gated_delta_net(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* g, Tensor* beta, Tensor* state,
                        Tensor* cells = nullptr);

// ---- graph -----------------------------------------------------------------------------------
// The nodes that compute `outputs`, in an order where every source comes before its users.
// Leafs (Op::NONE) are listed separately. Outputs are flagged kFlagOutput; an unnamed tensor
// is named "node_<i>" / "leaf_<i>" by its index in its list (ggml's names).
struct Graph {
  std::vector<Tensor*> nodes;
  std::vector<Tensor*> leafs;
  // Names this graph as it is laid out now: build_graph gives every graph a new id and
  // plan_memory a new one whenever it moves the data. What a backend derives from a graph (the
  // CPU's schedule) it may keep under the id and reuse when the same graph is computed again.
  uint64_t id = 0;
};
Graph build_graph(std::initializer_list<Tensor*> outputs);
Graph build_graph(std::span<Tensor* const> outputs);

// Assigns memory to every non-view node without data, reusing a buffer once its last user has
// run (outputs and inputs are never reused), and resolves view data pointers. Returns the bytes
// needed; with `arena` non-null, sets data pointers into it (it must hold that many bytes).
// Call once with nullptr to size the arena, then again with it (which gives g a new id).
// reuse_after: a buffer goes to another tensor only that many nodes after its last user (for a
// backend that runs independent nodes at once: Backend::reuse_after).
size_t plan_memory(Graph& g, void* arena, size_t alignment = 64, size_t reuse_after = 0);
// A graph id never given before (build_graph and plan_memory use it).
uint64_t new_graph_id();

}  // namespace hart
