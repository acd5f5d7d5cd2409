// lfm2: Liquid LFM2 (llama.cpp src/models/lfm2.cpp). Pre-norm layers of two kinds beside a
// SwiGLU feed-forward each: attention (per-head Q/K norms, RoPE NEOX; sliding-window when the
// file sets a window) where the layer has KV heads, else a gated short convolution whose last
// shortconv.l_cache - 1 inputs are carried per sequence (a fixed-size recurrent state).
#include <cmath>

#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

#include "common/error.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.shortconv_l_cache = k.req_int("shortconv.l_cache");
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  if (hp.shortconv_l_cache < 2) throw Error(hp.arch_name + ".shortconv.l_cache must be at least 2");
  hp.sliding_window = int(k.opt_int("attention.sliding_window").value_or(0));
  for (LayerConfig& l : hp.layers) {
    if (l.n_head_kv == 0) {  // a short-conv layer
      l.attn = AttnKind::NONE;
      l.recurrent = RecurrentKind::SHORT_CONV;
      l.state = {int64_t(hp.shortconv_l_cache - 1) * hp.n_embd};
    } else if (hp.sliding_window > 0) {
      l.attn = AttnKind::SLIDING;  // with the full layers' RoPE base
    }
  }
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  const int64_t d = hp.n_embd;
  head_tensors(list, hp, w, "token_embd_norm");
  for (int il = 0; il < hp.n_layer; il++) {
    const LayerConfig& c = hp.layers[size_t(il)];
    LayerWeights& L = w.layers[size_t(il)];
    if (c.recurrent == RecurrentKind::SHORT_CONV) {
      list.add(blk(il, "attn_norm.weight"), {d}, TensorRole::NORM, &L.attn_norm);
      list.add(blk(il, "shortconv.conv.weight"), {hp.shortconv_l_cache, d}, TensorRole::CONV, &L.conv);
      list.add(blk(il, "shortconv.in_proj.weight"), {d, 3 * d}, TensorRole::MATRIX, &L.conv_in.w);
      list.add(blk(il, "shortconv.out_proj.weight"), {d, d}, TensorRole::MATRIX, &L.conv_out.w);
    } else {
      attention_tensors(list, hp, il, L, {.qk_norm = true});
    }
    ffn_tensors(list, hp, il, L, {.scale_used = false});
  }
}

// in_proj gives B, C, x per token; the convolution runs over B*x and its carried past, and C
// gates its output: out_proj(C * conv(B * x)).
Tensor* short_conv(Forward& f, int il, Tensor* h) {
  const LayerWeights& L = f.w.layers[size_t(il)];
  const int64_t d = f.hp.n_embd;
  Tensor* bcx = mm(f, L.conv_in.w, h);  // (3 n_embd, n)
  const size_t col = bcx->nb[1];
  std::vector<Tensor*> outs;
  for (const SeqRun& r : f.seq_runs()) {
    auto part = [&](int i) {  // (n_embd, n_tok, n_seq) of the run
      return view(f.c, bcx, {d, r.n_tok, r.n_seq}, {col, col * size_t(r.n_tok)},
                  size_t(r.first) * col + size_t(i * d) * sizeof(float));
    };
    Tensor* y = mul(f.c, part(1), causal_conv(f, il, 0, r, mul(f.c, part(0), part(2)), L.conv));  // (n_embd, n_tok, n_seq)
    outs.push_back(reshape(f.c, y, {d, r.n_tok * r.n_seq}));
  }
  return mm(f, L.conv_out.w, join_runs(f, outs));
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerConfig& c = f.hp.layers[size_t(il)];
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* h = norm(f, x, L.attn_norm);
    Tensor* mix = c.recurrent == RecurrentKind::SHORT_CONV ? short_conv(f, il, h)
                                                           : attention(f, il, h, nullptr, f.hp.kq_scale(il));
    x = named(add(f.c, x, mix), "ffn_inp", il);
    x = named(add(f.c, x, ffn(f, il, norm(f, x, L.ffn_norm), Glu::SWIGLU, false)), "l_out", il);
  }
  return lm_head(f, x);
}

}  // namespace

extern const Arch arch_lfm2{{"lfm2"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
