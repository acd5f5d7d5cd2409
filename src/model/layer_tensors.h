// Tensor-list pieces the architectures share, with the names and shapes llama.cpp's loaders
// give them (create_tensor_qkv, the generic `.scale` / `.input_scale` pass, tied outputs).
#pragma once

#include "model/hparams.h"
#include "model/tensor_list.h"

namespace hart {

// token_embd, the output norm (`norm_name`.weight), and `output` (optional: without it the
// output projection is token_embd, tied).
void head_tensors(TensorList& list, const HParams& hp, Weights& w, const char* norm_name = "output_norm",
                  Bias output_bias = Bias::NONE);

// rope_freqs (Llama 3.1 style), or for LongRoPE files rope_factors_long / _short; optional.
void rope_factor_tensors(TensorList& list, const HParams& hp, Weights& w);

struct AttnSpec {
  Bias qkv_bias = Bias::OPTIONAL;  // create_tensor_qkv always accepts q, k, v biases
  Bias o_bias = Bias::NONE;
  bool fused_typical = false;      // real checkpoints hold attn_qkv (so do synthetic ones)
  bool qk_norm = false;            // per-head attn_q_norm / attn_k_norm
  bool post_norm = false;          // post_attention_norm
  bool q_gate = false;             // qwen35: attn_q holds each head's query and then its output gate
};
// attn_norm, attn_qkv or attn_q/k/v, attn_output, and what `s` adds.
void attention_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const AttnSpec& s);

struct FfnSpec {
  Bias bias = Bias::NONE;
  bool scale_used = true;  // false: the architecture's graph ignores the scales it loads
  bool fused_up = false;   // phi3: ffn_up (n_embd, 2 n_ff) holds gate and up, no ffn_gate
  bool post_norm = false;  // post_ffw_norm
  bool pre_norm = true;    // ffn_norm (qwen35 norms the feed-forward's input with post_attention_norm)
};
// ffn_norm, ffn_gate, ffn_up, ffn_down, and what `s` adds.
void ffn_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const FfnSpec& s);

struct MoeSpec {
  bool scale_used = false;     // the experts' per-expert scales are multiplied in (qwen3moe)
  bool gate_optional = false;  // granitemoe: without ffn_gate_exps the experts are silu(up)
  bool gate_up = false;        // ffn_gate_up_exps (fused) or ffn_gate_exps and ffn_up_exps
  bool pre_norm = true;        // ffn_norm (qwen35moe norms with post_attention_norm)
  bool shexp_scales = false;   // the shared expert's scales are multiplied in
  bool shexp_gate = false;     // ffn_gate_inp_shexp: the shared expert's sigmoid gate
};
// ffn_norm, the router ffn_gate_inp, ffn_gate/up/down_exps, and the shared expert's
// ffn_gate/up/down_shexp when HParams::n_ff_shexp is set.
void moe_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const MoeSpec& s);

// Every layer's attention_tensors and ffn_tensors (a layer of the pre-norm decoder).
void decoder_tensors(TensorList& list, const HParams& hp, Weights& w, const AttnSpec& attn, const FfnSpec& ffn);

}  // namespace hart
