// granite, granitemoe: IBM Granite 3.x dense and mixture of experts (llama.cpp
// src/models/granite.cpp, granite-moe.cpp: one graph). The llama block with multipliers:
// embeddings times embedding_scale, each residual branch times residual_scale, logits divided by
// logit_scale. A file with experts (expert_count > 0, either name) has a MoE feed-forward whose
// chosen experts' probabilities are renormalized, plus a shared expert every token takes when
// expert_shared_feed_forward_length is set. granite applies RoPE only when
// rope.scaling.finetuned says so; granitemoe always does.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

#include "common/error.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  hp.logit_scale = k.req_float("logit_scale");
  hp.residual_scale = k.opt_float("residual_scale").value_or(0.0f);
  hp.embedding_scale = k.opt_float("embedding_scale").value_or(0.0f);
  hp.attention_scale = k.opt_float("attention.scale").value_or(0.0f);
  if (hp.logit_scale == 0.0f) throw Error("granite.logit_scale must not be 0");
  if (k.opt_int("expert_count").value_or(0) > 0) {
    read_moe(k, hp, nullptr);  // the experts are feed_forward_length wide
    hp.n_ff_shexp = int(k.opt_int("expert_shared_feed_forward_length").value_or(0));
  }
  if (hp.arch_name == "granitemoe") return;
  if (auto ds = k.opt_array("deepstack_mapping"))
    for (int64_t v : *ds)
      if (v >= 0) throw Error("granite.deepstack_mapping: Granite Vision's deepstack inputs are not supported");
  // Granite uses rope.scaling.finetuned as its RoPE switch (default on).
  if (!k.opt_bool("rope.scaling.finetuned").value_or(true))
    for (LayerConfig& l : hp.layers) l.n_rot = 0;
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  rope_factor_tensors(list, hp, w);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    attention_tensors(list, hp, il, L, {.o_bias = Bias::OPTIONAL});
    if (hp.layers[size_t(il)].ffn == FfnKind::MOE)
      moe_tensors(list, hp, il, L, {.gate_optional = true});
    else
      ffn_tensors(list, hp, il, L, {.bias = Bias::OPTIONAL, .scale_used = false});
  }
}

Tensor* residual_scaled(Forward& f, Tensor* branch) {
  return f.hp.residual_scale != 0.0f ? scale(f.c, branch, f.hp.residual_scale) : branch;
}

// The feed-forward of layer il: dense, or the experts plus the shared expert.
Tensor* feed_forward(Forward& f, int il, Tensor* h) {
  if (f.hp.layers[size_t(il)].ffn == FfnKind::DENSE) return ffn(f, il, h, Glu::SWIGLU, false);
  const LayerWeights& L = f.w.layers[size_t(il)];
  Tensor* y = moe_ffn(f, il, h, {.norm_weights = true});
  return L.up_shexp ? add(f.c, y, glu_ffn(f, L.gate_shexp, L.up_shexp, L.down_shexp, h, Glu::SWIGLU, false)) : y;
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, f.hp.embedding_scale);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* attn = attention(f, il, norm(f, x, L.attn_norm), rope_factors(f), f.hp.kq_scale(il));
    x = named(add(f.c, residual_scaled(f, attn), x), "ffn_inp", il);
    x = named(add(f.c, residual_scaled(f, feed_forward(f, il, norm(f, x, L.ffn_norm))), x), "l_out", il);
  }
  Tensor* logits = lm_head(f, x);
  return logits ? scale(f.c, logits, 1.0f / f.hp.logit_scale) : nullptr;
}

}  // namespace

extern const Arch arch_granite{{"granite", "granitemoe"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
