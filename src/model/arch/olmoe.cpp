// olmoe: AI2's OLMoE (llama.cpp src/models/olmoe.cpp). Llama-style attention whose Q/K RMS norms
// span all heads of a token (weights of n_embd), RoPE NEOX; a MoE feed-forward in every layer
// whose chosen experts keep their raw router probabilities (no renormalization, no scales).
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  read_moe(k, hp, nullptr);  // the experts are feed_forward_length wide
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  list.add("token_embd.weight", {hp.n_embd, hp.n_vocab}, TensorRole::EMBED, &w.tok_embd);
  list.add("output_norm.weight", {hp.n_embd}, TensorRole::NORM, &w.output_norm);
  list.linear("output", hp.n_embd, hp.n_vocab, w.output);  // required: OLMoE never ties it
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    attention_tensors(list, hp, il, L, {});
    // Both n_embd long, as llama.cpp creates them (OLMoE's K has as many heads as Q).
    list.add(blk(il, "attn_q_norm.weight"), {hp.n_embd}, TensorRole::NORM, &L.q_norm);
    list.add(blk(il, "attn_k_norm.weight"), {hp.n_embd}, TensorRole::NORM, &L.k_norm);
    moe_tensors(list, hp, il, L, {});
  }
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    x = named(add(f.c, attention(f, il, norm(f, x, L.attn_norm), nullptr, f.hp.kq_scale(il)), x), "ffn_inp", il);
    x = named(add(f.c, moe_ffn(f, il, norm(f, x, L.ffn_norm), {}), x), "l_out", il);
  }
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_olmoe{{"olmoe"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
