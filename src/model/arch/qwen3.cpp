// qwen3: Qwen3 dense (llama.cpp src/models/qwen3.cpp). The llama block with per-head RMS norms
// on Q and K before RoPE NEOX; head_dim may differ from n_embd / n_head.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) { hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon"); }

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  decoder_tensors(list, hp, w, {.qk_norm = true}, {});
  list.add("cls.output.weight", {hp.n_embd, hp.n_cls_out}, TensorRole::MATRIX, &w.cls_out, TensorNeed::OPTIONAL);  // Qwen3-Reranker
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) x = prenorm_layer(f, il, x, {});
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_qwen3{{"qwen3"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
