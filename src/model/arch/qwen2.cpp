// qwen2: Qwen2 / Qwen2.5 (llama.cpp src/models/qwen2.cpp). The llama block with Q/K/V biases,
// RoPE NEOX, an optional output bias; the feed-forward ignores the scales a file may carry.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) { hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon"); }

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w, "output_norm", Bias::OPTIONAL);
  decoder_tensors(list, hp, w, {.qkv_bias = Bias::TYPICAL}, {.scale_used = false});
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) x = prenorm_layer(f, il, x, {.ffn_scales = false});
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_qwen2{{"qwen2"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
