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

struct LayerWeights {
  Tensor* attn_norm = nullptr;       // (n_embd,)
  Linear q, k, v, qkv, o;            // qkv: fused (n_embd, q + k + v), instead of q, k, v
  Tensor* q_norm = nullptr;          // (head_dim,) per-head RMS norm weights
  Tensor* k_norm = nullptr;
  Tensor* attn_post_norm = nullptr;  // (n_embd,) gemma: on the attention output

  Tensor* ffn_norm = nullptr;        // (n_embd,)
  Linear gate, up, down;             // up alone (n_embd, 2 n_ff): phi3's fused gate+up
  Tensor* ffn_post_norm = nullptr;   // (n_embd,) gemma

  // LFM2 short convolution: in_proj (n_embd, 3 n_embd) -> B, C, x; conv (width, n_embd).
  Linear conv_in, conv_out;
  Tensor* conv = nullptr;

  // Gemma 4 per-layer embedding input: gate (n_embd, n_pl), proj (n_pl, n_embd).
  Linear ple_gate, ple_proj;
  Tensor* ple_post_norm = nullptr;
  Tensor* out_scale = nullptr;       // (1,) gemma4 layer output scalar
};

struct Weights {
  Tensor* tok_embd = nullptr;     // (n_embd, n_vocab)
  Tensor* output_norm = nullptr;  // (n_embd,)
  Linear output;                  // (n_embd, n_vocab); w == tok_embd when the file ties them
  Tensor* rope_freqs = nullptr;   // (n_rot/2,) frequency factors (Llama 3.1, Gemma 4 full layers)
  Tensor* rope_long = nullptr;    // (n_rot/2,) Phi-3 LongRoPE factors beyond n_ctx_orig
  Tensor* rope_short = nullptr;   // (n_rot/2,) ... and within it
  // Gemma 4: per-layer token embeddings (n_pl * n_layer, n_vocab) and their projection.
  Tensor* per_layer_tok_embd = nullptr;
  Tensor* per_layer_model_proj = nullptr;  // (n_embd, n_pl * n_layer)
  Tensor* per_layer_proj_norm = nullptr;   // (n_pl,)
  std::vector<LayerWeights> layers;
};

}  // namespace hart
