// smollm3: SmolLM3 (llama.cpp src/models/smollm3.cpp). The llama block, except that every
// fourth layer applies no RoPE (NoPE layers).
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"

namespace hart {
namespace {

constexpr int kNoRopeLayerStep = 4;  // layers il with (il + 1) % 4 == 0 skip RoPE

void read(const KeyReader& k, HParams& hp) {
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  for (int il = 0; il < hp.n_layer; il++)
    if ((il + 1) % kNoRopeLayerStep == 0) hp.layers[size_t(il)].n_rot = 0;
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  decoder_tensors(list, hp, w, {}, {.scale_used = false});
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) x = prenorm_layer(f, il, x, {.ffn_scales = false});
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_smollm3{{"smollm3"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
