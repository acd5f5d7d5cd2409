// qwen3moe: Qwen3 mixture of experts (llama.cpp src/models/qwen3moe.cpp). Qwen3's attention (per-
// head Q/K RMS norms, RoPE NEOX) with a MoE feed-forward in every layer: the chosen experts'
// router probabilities renormalized to sum 1, each expert's output times its scale when the file
// has one.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  read_moe(k, hp, "expert_feed_forward_length");
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  for (int il = 0; il < hp.n_layer; il++) {
    attention_tensors(list, hp, il, w.layers[size_t(il)], {.qk_norm = true});
    moe_tensors(list, hp, il, w.layers[size_t(il)], {.scale_used = true});
  }
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    x = named(add(f.c, attention(f, il, norm(f, x, L.attn_norm), nullptr, f.hp.kq_scale(il)), x), "ffn_inp", il);
    x = named(add(f.c, moe_ffn(f, il, norm(f, x, L.ffn_norm), {.norm_weights = true, .scales = true}), x), "l_out", il);
  }
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_qwen3moe{{"qwen3moe"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
