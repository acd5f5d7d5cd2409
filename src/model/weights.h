// The weight tensors of a loaded model, as the architectures name them (llama.cpp's names).
// A field is nullptr when the file has no such tensor; the architecture's tensor list says which
// are required. Shapes are [ne0, ne1] as in ggml: a matrix W (k, n) maps k inputs to n outputs.
#pragma once

#include <vector>

#include "graph/tensor.h"

namespace hart {

// y = W x, then (in the order llama.cpp applies them) a per-tensor scale and a bias.
struct Linear {
  Tensor* w = nullptr;  // (k, n)
  Tensor* b = nullptr;  // (n,)
  Tensor* s = nullptr;  // (1,): llama.cpp's `<name>.scale`, multiplied into the output
  explicit operator bool() const { return w != nullptr; }
};

// RWKV-7's time mixing (llama.cpp's time_mix_*): the token-shift interpolation weights and the
// low-rank projections for decay (w), in-context learning rate (a), value residual (v) and gate (g).
struct RwkvTimeMix {
  Tensor* lerp_fused = nullptr;  // (n_embd, 1, 1, 6 | 5): for r, w, k, v, a (, g)
  Tensor *w0 = nullptr, *w1 = nullptr, *w2 = nullptr;
  Tensor *a0 = nullptr, *a1 = nullptr, *a2 = nullptr;
  Tensor *v0 = nullptr, *v1 = nullptr, *v2 = nullptr;
  Tensor *g1 = nullptr, *g2 = nullptr;  // optional together (arwkv7)
  Tensor *k_k = nullptr, *k_a = nullptr, *r_k = nullptr;  // (n_embd,)
  Tensor *receptance = nullptr, *key = nullptr, *value = nullptr, *output = nullptr;  // (n_embd, n_embd)
  Tensor *ln = nullptr, *ln_b = nullptr;  // per-head group norm weights, optional (arwkv7)
};

// RWKV-7's channel mixing: value(relu(key(x shifted by lerp_k))^2).
struct RwkvChannelMix {
  Tensor* lerp_k = nullptr;  // (n_embd,)
  Tensor *key = nullptr, *value = nullptr;  // (n_embd, n_ff), (n_ff, n_embd)
};

// Qwen 3.5's Gated DeltaNet (linear attention): qkv (n_embd, 2 key_dim + value_dim) into the
// causal convolution conv (d_conv, that width), the output gate (n_embd, value_dim), beta and
// alpha (n_embd, n_v_heads), the decay's dt bias and a = -exp(A_log) (n_v_heads,), the gated
// norm's weights (state_size,) and out (value_dim, n_embd).
struct DeltaNet {
  Linear qkv, gate, beta, alpha, out;
  Tensor *conv = nullptr, *dt_bias = nullptr, *a = nullptr, *norm = nullptr;
};

// A multi-token-prediction block's own tensors (llama.cpp's layer.nextn): the token's
// embedding and the hidden state it follows, each RMS-normed (enorm, hnorm), go through eh_proj
// (2 n_embd, n_embd) into a decoder block; embed_tokens, shared_head_norm and shared_head_head
// are optional (the model's token_embd, output_norm and output instead).
struct NextN {
  Linear eh_proj;
  Tensor *enorm = nullptr, *hnorm = nullptr;
  Tensor *embed_tokens = nullptr, *shared_head_norm = nullptr;
  Linear shared_head_head;
};

struct LayerWeights {
  Tensor* attn_norm = nullptr;       // (n_embd,)
  Tensor* attn_norm_b = nullptr;     // layer-norm bias (RWKV-7)
  Linear q, k, v, qkv, o;            // qkv: fused (n_embd, q + k + v), instead of q, k, v
  Tensor* q_norm = nullptr;          // (head_dim,) per-head RMS norm weights
  Tensor* k_norm = nullptr;
  Tensor* attn_post_norm = nullptr;  // (n_embd,) gemma: on the attention output

  Tensor* ffn_norm = nullptr;        // (n_embd,)
  Linear gate, up, down;             // up alone (n_embd, 2 n_ff): phi3's fused gate+up
  Tensor* ffn_post_norm = nullptr;   // (n_embd,) gemma

  // Mixture of experts: the router (n_embd, n_expert) and the experts' projections stacked,
  // (n_embd, n_ff, n_expert) and (n_ff, n_embd, n_expert), each Linear::s then (n_expert,), or
  // gate and up fused (n_embd, 2 n_ff, n_expert); a shared expert every token takes (granitemoe,
  // qwen35moe) as a dense SwiGLU block, with a sigmoid gate (n_embd,) in qwen35moe.
  Linear gate_inp, gate_exps, up_exps, gate_up_exps, down_exps;
  Linear gate_shexp, up_shexp, down_shexp;
  Tensor* gate_inp_shexp = nullptr;

  // LFM2 short convolution: in_proj (n_embd, 3 n_embd) -> B, C, x; conv (width, n_embd).
  Linear conv_in, conv_out;
  Tensor* conv = nullptr;

  // Gemma 4 per-layer embedding input: gate (n_embd, n_pl), proj (n_pl, n_embd).
  Linear ple_gate, ple_proj;
  Tensor* ple_post_norm = nullptr;
  Tensor* out_scale = nullptr;       // (1,) gemma4 layer output scalar

  DeltaNet delta_net;
  RwkvTimeMix time_mix;
  RwkvChannelMix channel_mix;
  Tensor *attn_norm_2 = nullptr, *attn_norm_2_b = nullptr;  // RWKV-7: the layer norm before channel mixing
  NextN nextn;  // a multi-token-prediction block (Weights::nextn)
};

struct Weights {
  Tensor* tok_embd = nullptr;     // (n_embd, n_vocab)
  Tensor* tok_norm = nullptr;     // (n_embd,) RWKV-7: a layer norm right after the embeddings
  Tensor* tok_norm_b = nullptr;
  Tensor* output_norm = nullptr;  // (n_embd,)
  Tensor* output_norm_b = nullptr;
  Linear output;                  // (n_embd, n_vocab); w == tok_embd when the file ties them
  Tensor* rope_freqs = nullptr;   // (n_rot/2,) frequency factors (Llama 3.1, Gemma 4 full layers)
  Tensor* rope_long = nullptr;    // (n_rot/2,) Phi-3 LongRoPE factors beyond n_ctx_orig
  Tensor* rope_short = nullptr;   // (n_rot/2,) ... and within it
  // Gemma 4: per-layer token embeddings (n_pl * n_layer, n_vocab) and their projection.
  Tensor* per_layer_tok_embd = nullptr;
  Tensor* per_layer_model_proj = nullptr;  // (n_embd, n_pl * n_layer)
  Tensor* per_layer_proj_norm = nullptr;   // (n_pl,)
  // A reranker's classifier head (Qwen3-Reranker: the yes / no rows of its LM head), which the
  // server applies to the pooled hidden state (serve/embeddings.h).
  Tensor* cls_out = nullptr;  // (n_embd, n_cls_out)
  std::vector<LayerWeights> layers;
  std::vector<LayerWeights> nextn;  // HParams::nextn_layers' blocks
};

}  // namespace hart
