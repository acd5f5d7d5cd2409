// rwkv7: RWKV-7 "Goose" (llama.cpp src/models/rwkv7.cpp). No attention: each layer mixes time
// (token shift into r, w, k, v, a, g; the WKV state recurrence per head; a per-head norm; the
// value residual from layer 0) and channels (a squared-ReLU feed-forward on its own token shift),
// with layer norms; a layer norm right after the embeddings. Per sequence it carries two
// token-shift rows and the WKV state per layer, whatever its length.
#include "model/arch.h"
#include "model/node_names.h"
#include "model/rwkv.h"

#include "common/error.h"

namespace hart {
namespace {

enum Part { kAttShift, kFfnShift, kWkv };  // the layer's state parts

void read(const KeyReader& k, HParams& hp) {
  if (k.opt_int("token_shift_count").value_or(2) != 2) throw Error("rwkv7.token_shift_count must be 2");
  read_rwkv7(k, hp, 2);
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  const int64_t d = hp.n_embd, ff = hp.layers[0].n_ff;
  list.add("token_embd.weight", {d, hp.n_vocab}, TensorRole::EMBED, &w.tok_embd);
  list.add("token_embd_norm.weight", {d}, TensorRole::NORM, &w.tok_norm);
  list.add("token_embd_norm.bias", {d}, TensorRole::BIAS, &w.tok_norm_b);
  list.add("output_norm.weight", {d}, TensorRole::NORM, &w.output_norm);
  list.add("output_norm.bias", {d}, TensorRole::BIAS, &w.output_norm_b);
  list.add("output.weight", {d, hp.n_vocab}, TensorRole::MATRIX, &w.output.w);
  for (int il = 0; il < hp.n_layer; il++) {
    LayerWeights& L = w.layers[size_t(il)];
    list.add(blk(il, "attn_norm.weight"), {d}, TensorRole::NORM, &L.attn_norm);
    list.add(blk(il, "attn_norm.bias"), {d}, TensorRole::BIAS, &L.attn_norm_b);
    list.add(blk(il, "attn_norm_2.weight"), {d}, TensorRole::NORM, &L.attn_norm_2);
    list.add(blk(il, "attn_norm_2.bias"), {d}, TensorRole::BIAS, &L.attn_norm_2_b);
    rwkv7_time_mix_tensors(list, hp, il, L.time_mix, TensorNeed::REQUIRED);
    list.add(blk(il, "channel_mix_lerp_k.weight"), {d, 1, 1}, TensorRole::BIAS, &L.channel_mix.lerp_k);
    list.add(blk(il, "channel_mix_key.weight"), {d, ff}, TensorRole::MATRIX, &L.channel_mix.key);
    list.add(blk(il, "channel_mix_value.weight"), {ff, d}, TensorRole::MATRIX, &L.channel_mix.value);
  }
}

Tensor* build(Forward& f) {
  Tensor* x = layer_norm(f, embed(f, 1.0f), f.w.tok_norm, f.w.tok_norm_b);
  Tensor* v_first = nullptr;
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* h = layer_norm(f, x, L.attn_norm, L.attn_norm_b);
    x = named(add(f.c, rwkv7_time_mix(f, il, h, token_shift(f, il, kAttShift, h), v_first, kWkv), x), "ffn_inp", il);
    h = layer_norm(f, x, L.attn_norm_2, L.attn_norm_2_b);
    x = named(add(f.c, rwkv7_channel_mix(f, il, h, token_shift(f, il, kFfnShift, h)), x), "l_out", il);
  }
  x = f.output_rows(x);
  if (!x) return nullptr;
  return mm(f, f.w.output.w, layer_norm(f, x, f.w.output_norm, f.w.output_norm_b));
}

}  // namespace

extern const Arch arch_rwkv7{{"rwkv7"}, RopeMode::NORMAL, read, tensors, build};

}  // namespace hart
