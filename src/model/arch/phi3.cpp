// phi3: Phi-3 / Phi-3.5 mini and medium (llama.cpp src/models/phi3.cpp). Pre-norm blocks with a
// fused QKV projection, RoPE NEOX with LongRoPE factors (long ones once a sequence may outgrow
// the original context), Q scaled by 1/sqrt(head_dim) before attention, and a fused gate+up
// projection feeding SwiGLU. Phi-3's sliding window is off in llama.cpp, and so here.
#include <cmath>

#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) { hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon"); }

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  const int64_t half = hp.n_rot / 2;  // Phi-3 loads both factor sets whatever the scaling type
  list.add("rope_factors_long.weight", {half}, TensorRole::FACTORS, &w.rope_long, TensorNeed::OPTIONAL);
  list.add("rope_factors_short.weight", {half}, TensorRole::FACTORS, &w.rope_short, TensorNeed::OPTIONAL);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    attention_tensors(list, hp, il, L, {.fused_typical = true});
    ffn_tensors(list, hp, il, L, {.scale_used = false, .fused_up = true});
  }
}

// SwiGLU over ffn_up's two halves: silu(first) * second, then ffn_down.
Tensor* fused_ffn(Forward& f, const LayerWeights& L, Tensor* h) {
  Tensor* y = ffn_linear(f, L.up, h, false);  // (2 n_ff, n)
  const int64_t ff = y->ne[0] / 2, n = y->ne[1];
  const size_t row = y->nb[1];
  Tensor* gate = view(f.c, y, {ff, n}, {row}, 0);
  Tensor* up = view(f.c, y, {ff, n}, {row}, size_t(ff) * sizeof(float));
  return ffn_linear(f, L.down, glu(f.c, gate, up, Glu::SWIGLU), false);
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    auto [q, k, v] = qkv(f, il, norm(f, x, L.attn_norm));
    q = rope(f, il, q, rope_factors(f));
    k = rope(f, il, k, rope_factors(f));
    q = scale(f.c, q, 1.0f / std::sqrt(float(f.hp.layers[size_t(il)].head_dim)));
    x = named(add(f.c, linear(f, L.o, attend(f, il, q, k, v, 1.0f)), x), "ffn_inp", il);
    x = named(add(f.c, fused_ffn(f, L, norm(f, x, L.ffn_norm)), x), "l_out", il);
  }
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_phi3{{"phi3"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
