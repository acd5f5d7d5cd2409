// The pieces of a forward pass that architectures share, each as llama.cpp computes it (its
// llm_graph_context::build_* helpers), so an architecture file reads as its forward pass top to
// bottom. Shapes: x (n_embd, n) for n tokens; per-head tensors (head_dim, heads, n).
#pragma once

#include "model/forward.h"

namespace hart {

// Token embeddings (n_embd, n), times `scale` unless it is 0 or 1; a batch of embeddings gives
// them unscaled.
Tensor* embed(Forward& f, float scale);

// W (k, n) @ x (k, t) -> (n, t) with every adapter the batch uses (model/lora.h): plus
// s B (A x) per adapter that has a pair for W (llama.cpp's build_lora_mm without the scale).
Tensor* mm(Forward& f, Tensor* w, Tensor* x);
// y (a product of W with x) plus the adapters' s B (A x); with ids, of the experts' products
// (mul_mat_id: x (k, 1 | used, t), y (n, used, t)).
Tensor* lora_add(Forward& f, Tensor* w, Tensor* x, Tensor* y, Tensor* ids = nullptr);

// rms_norm(x) * w; w == nullptr: the plain RMS norm.
Tensor* norm(Forward& f, Tensor* x, Tensor* w);

// W (k, n) @ x (k, t) -> (n, t), then * s, then + b: projections into and out of attention, the
// output head (llama.cpp's build_lora_mm with a scale, then the bias).
Tensor* linear(Forward& f, const Linear& l, Tensor* x);

// W x, then + b, then * s (with_scale): the feed-forward projections (llama.cpp's build_ffn order).
Tensor* ffn_linear(Forward& f, const Linear& l, Tensor* x, bool with_scale = true);

struct Qkv {
  Tensor *q, *k, *v;  // (head_dim, n_head | n_head_kv, n)
};
// Q, K, V of layer il from h: the fused qkv matrix (views of its output) or three matrices.
Qkv qkv(Forward& f, int il, Tensor* h);

// RoPE of layer il (its rotated dims, base and frequency scale; none when n_rot is 0), with
// optional frequency factors.
Tensor* rope(Forward& f, int il, Tensor* x, Tensor* freq_factors);

// Attention of layer il: writes k, v (head_dim, n_head_kv, n) into the layer's cache, then each
// token attends its sequence's positions (all, or its window) with softmax(q·kᵀ·kq_scale).
// k == v == nullptr: the layer reads the cache of HParams layer kv_layer (shared KV).
// Returns (head_dim * n_head, n).
Tensor* attend(Forward& f, int il, Tensor* q, Tensor* k, Tensor* v, float kq_scale);

// The frequency factors llama.cpp's get_rope_factors picks: rope_freqs, else Phi-3's long
// factors when a sequence may outgrow the training context, else the short ones (or none).
Tensor* rope_factors(Forward& f);

// The usual self-attention block: qkv, Q/K RMS norms where the layer has them (per head, or
// over all heads at once when the norm weights are that long: OLMoE), RoPE, attention, output
// projection.
Tensor* attention(Forward& f, int il, Tensor* h, Tensor* freq_factors, float kq_scale);

// Gated feed-forward: down(act(gate h) * up h). Each projection adds its bias, then its scale
// (llama.cpp's build_ffn order); `with_scales` false for architectures whose graph ignores the
// scales their files carry.
Tensor* ffn(Forward& f, int il, Tensor* h, Glu act, bool with_scales = true);
// The same block with other weights (a shared expert's).
Tensor* glu_ffn(Forward& f, const Linear& gate, const Linear& up, const Linear& down, Tensor* h, Glu act,
                bool with_scales);

struct Moe {
  bool norm_weights = false;  // the chosen experts' probabilities renormalized to sum 1
  bool scales = false;        // the experts' per-expert scales multiplied into their outputs
};
// Mixture-of-experts feed-forward (llama.cpp's build_moe_ffn with softmax gating and SwiGLU
// experts): the router's softmax over the HParams::n_expert experts picks each token's
// n_expert_used most likely (top_k); their outputs, weighted by those probabilities, are summed.
// h (n_embd, n) -> (n_embd, n).
Tensor* moe_ffn(Forward& f, int il, Tensor* h, const Moe& o);

// Part `part` of layer il's recurrent state, as the sequences of run r read it: (floats, n_seq).
Tensor* state_read(Forward& f, int il, int part, const SeqRun& r);
// Stores `value` (any shape of floats * n_seq elements) as that state after this step, once
// `read` (that part's state_read, or an op that reads the store's cells itself) has read the
// state before it.
void state_write(Forward& f, int il, int part, const SeqRun& r, Tensor* value, Tensor* read);
// The causal depthwise convolution (ssm_conv) of run r's inputs x (C, n_tok, n_seq) with kernel
// (K, C), over the K - 1 inputs before them, which state part `part` of layer il carries between
// steps -> (C, n_tok, n_seq).
Tensor* causal_conv(Forward& f, int il, int part, const SeqRun& r, Tensor* x, Tensor* kernel);
// The per-run outputs (d, n_tok * n_seq), in run order, as one (d, n).
Tensor* join_runs(Forward& f, const std::vector<Tensor*>& outs);

// The pre-norm decoder layer of llama and its relatives:
//   x += attention(rms_norm(x) * attn_norm);  x += ffn_swiglu(rms_norm(x) * ffn_norm)
struct PrenormLayer {
  Tensor* freq_factors = nullptr;
  bool ffn_scales = true;  // false: the architecture ignores the feed-forward scales
};
Tensor* prenorm_layer(Forward& f, int il, Tensor* x, const PrenormLayer& o);

// c * tanh(x / c) (Gemma's logit soft-capping); x itself when c is 0.
Tensor* softcap(Forward& f, Tensor* x, float c);

// The model head: the rows whose logits were asked for, the output norm, the output
// projection. nullptr when the batch asks for no logits.
Tensor* lm_head(Forward& f, Tensor* x);
// lm_head with a norm and a projection of its own (an MTP block's shared head). With
// ForwardGraph::keep_hidden, every token's hidden state after the norm is an output too
// (ForwardGraph::hidden_all), whatever rows the logits are of.
Tensor* output_head(Forward& f, Tensor* x, Tensor* norm_w, const Linear& out);

}  // namespace hart
