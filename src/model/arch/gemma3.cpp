// gemma3: Gemma 3 (llama.cpp src/models/gemma3.cpp). Embeddings times sqrt(n_embd); per layer
// a sliding-window / global attention pattern (5 local : 1 global by default; local layers take
// their own RoPE base and no frequency scaling), per-head RMS norms on Q and K, Q pre-scaled,
// RMS norms after attention and after the GeGLU (tanh) feed-forward; optional final logit
// soft-capping.
#include <cmath>

#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.sliding_window = int(k.opt_int("attention.sliding_window").value_or(0));
  if (hp.sliding_window > 0) read_swa_pattern(k, hp, 6, false, true);
  hp.final_softcap = k.opt_float("final_logit_softcapping").value_or(0.0f);
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  // gemma_pytorch's query scale: 1/sqrt(n_embd / n_head) for the 27B model (62 layers), else
  // 1/sqrt(head_dim).
  const LayerConfig& l0 = hp.layers[0];
  hp.attention_scale = 1.0f / std::sqrt(float(hp.n_layer == 62 ? hp.n_embd / l0.n_head : l0.head_dim));
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    attention_tensors(list, hp, il, L, {.qk_norm = true, .post_norm = true});
    ffn_tensors(list, hp, il, L, {.scale_used = false, .post_norm = true});
  }
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, std::sqrt(float(f.hp.n_embd)));
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    auto [q, k, v] = qkv(f, il, norm(f, x, L.attn_norm));
    q = rope(f, il, norm(f, q, L.q_norm), nullptr);
    k = rope(f, il, norm(f, k, L.k_norm), nullptr);
    q = scale(f.c, q, f.hp.attention_scale);
    Tensor* attn = linear(f, L.o, attend(f, il, q, k, v, 1.0f));
    x = named(add(f.c, norm(f, attn, L.attn_post_norm), x), "ffn_inp", il);
    Tensor* ff = ffn(f, il, norm(f, x, L.ffn_norm), Glu::GEGLU, false);
    x = named(add(f.c, norm(f, ff, L.ffn_post_norm), x), "l_out", il);
  }
  Tensor* logits = lm_head(f, x);
  return logits ? softcap(f, logits, f.hp.final_softcap) : nullptr;
}

}  // namespace

extern const Arch arch_gemma3{{"gemma3"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
