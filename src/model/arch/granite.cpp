// granite: IBM Granite 3.x dense (llama.cpp src/models/granite.cpp). The llama block with
// multipliers: embeddings times embedding_scale, each residual branch times residual_scale,
// logits divided by logit_scale; RoPE only when rope.scaling.finetuned says so.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"

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
  decoder_tensors(list, hp, w, {.o_bias = Bias::OPTIONAL}, {.bias = Bias::OPTIONAL, .scale_used = false});
}

Tensor* residual_scaled(Forward& f, Tensor* branch) {
  return f.hp.residual_scale != 0.0f ? scale(f.c, branch, f.hp.residual_scale) : branch;
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, f.hp.embedding_scale);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* attn = attention(f, il, norm(f, x, L.attn_norm), rope_factors(f), f.hp.kq_scale(il));
    x = add(f.c, residual_scaled(f, attn), x);
    x = add(f.c, residual_scaled(f, ffn(f, il, norm(f, x, L.ffn_norm), Glu::SWIGLU, false)), x);
  }
  Tensor* logits = lm_head(f, x);
  return logits ? scale(f.c, logits, 1.0f / f.hp.logit_scale) : nullptr;
}

}  // namespace

extern const Arch arch_granite{{"granite"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
