// arwkv7: RWKV-7 time mixing in place of attention inside a Qwen2-style model (llama.cpp
// src/models/arwkv7.cpp): RMS norms, RWKV-7's time mixing on one token shift, a SwiGLU
// feed-forward. Per sequence it carries one token-shift row and the WKV state per layer.
#include "model/arch.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"
#include "model/rwkv.h"

#include "common/error.h"

namespace hart {
namespace {

enum Part { kAttShift, kWkv };  // the layer's state parts

void read(const KeyReader& k, HParams& hp) {
  if (k.opt_int("token_shift_count").value_or(1) != 1) throw Error("arwkv7.token_shift_count must be 1");
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  read_rwkv7(k, hp, 1);
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  const int64_t d = hp.n_embd;
  list.add("token_embd.weight", {d, hp.n_vocab}, TensorRole::EMBED, &w.tok_embd);
  list.add("output_norm.weight", {d}, TensorRole::NORM, &w.output_norm);
  list.add("output.weight", {d, hp.n_vocab}, TensorRole::MATRIX, &w.output.w);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    list.add(blk(il, "attn_norm.weight"), {d}, TensorRole::NORM, &L.attn_norm);
    rwkv7_time_mix_tensors(list, hp, il, L.time_mix, TensorNeed::OPTIONAL);
    ffn_tensors(list, hp, il, L, {.scale_used = false});
  }
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  Tensor* v_first = nullptr;
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* h = norm(f, x, L.attn_norm);
    x = named(add(f.c, rwkv7_time_mix(f, il, h, token_shift(f, il, kAttShift, h), v_first, kWkv), x), "ffn_inp", il);
    x = named(add(f.c, ffn(f, il, norm(f, x, L.ffn_norm), Glu::SWIGLU, false), x), "l_out", il);
  }
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_arwkv7{{"arwkv7"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
