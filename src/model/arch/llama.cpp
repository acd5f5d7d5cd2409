// llama: Llama 2 / 3.x, TinyLlama, SmolLM2 (llama.cpp src/models/llama.cpp). Pre-norm blocks of
// attention (GQA, RoPE NORMAL, optional Llama 3.1 frequency factors) and a SwiGLU feed-forward.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) { hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon"); }

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  rope_factor_tensors(list, hp, w);
  decoder_tensors(list, hp, w, {.o_bias = Bias::OPTIONAL}, {.bias = Bias::OPTIONAL});
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);  // (n_embd, n)
  for (int il = 0; il < f.hp.n_layer; il++) x = prenorm_layer(f, il, x, {.freq_factors = rope_factors(f)});
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_llama{{"llama"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
