// gemma4: Gemma 4 dense (llama.cpp src/models/gemma4.cpp). Gemma 3's block with: a per-layer
// sliding / global pattern array, local and global layers of their own head size and rotated
// dims, proportional RoPE (frequency factors) on global layers, V RMS-normed, no query scaling,
// the last attention.shared_kv_layers layers attending the cache of the last local / global layer
// that has one, per-layer embedding inputs (a token's per_layer_tok_embd slice plus a projection
// of its embedding, gated into each layer's output), a per-layer output scalar, and final logit
// soft-capping.
#include <cmath>

#include "model/arch.h"
#include "model/blocks.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

#include "common/error.h"

namespace hart {
namespace {

void read(const KeyReader& k, HParams& hp) {
  hp.sliding_window = k.req_int("attention.sliding_window");
  if (!k.opt_array("attention.sliding_window_pattern"))
    throw Error(hp.arch_name + ".attention.sliding_window_pattern is missing");
  read_swa_pattern(k, hp, 0, false, true);
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  hp.n_embd_per_layer = k.req_int("embedding_length_per_layer_input");
  hp.final_softcap = k.opt_float("final_logit_softcapping").value_or(0.0f);
  hp.attention_scale = 1.0f;  // Gemma 4 scales neither Q nor the scores
  const int head_swa = k.req_int("attention.key_length_swa");
  if (k.req_int("attention.value_length_swa") != head_swa)
    throw Error(hp.arch_name + ": attention.value_length_swa must equal key_length_swa");
  const int rot_swa = int(k.opt_int("rope.dimension_count_swa").value_or(hp.n_rot));
  const int n_shared = int(k.opt_int("attention.shared_kv_layers").value_or(0));
  const int kv_from = hp.n_layer - n_shared;  // layers from here on have no K/V of their own
  if (n_shared > 0 && kv_from < 2) throw Error(hp.arch_name + ".attention.shared_kv_layers leaves no layers with K/V");
  for (int il = 0; il < hp.n_layer; il++) {
    LayerConfig& l = hp.layers[size_t(il)];
    const bool sliding = l.attn == AttnKind::SLIDING;
    if (sliding) {
      l.head_dim = head_swa;
      l.n_rot = rot_swa;
    }
    if (il >= kv_from) l.kv_layer = kv_from - (sliding ? 2 : 1);
  }
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  const int64_t d = hp.n_embd, n_pl = hp.n_embd_per_layer;
  head_tensors(list, hp, w);
  list.add("per_layer_token_embd.weight", {n_pl * hp.n_layer, hp.n_vocab}, TensorRole::EMBED, &w.per_layer_tok_embd);
  list.add("per_layer_model_proj.weight", {d, n_pl * hp.n_layer}, TensorRole::MATRIX, &w.per_layer_model_proj);
  list.add("per_layer_proj_norm.weight", {n_pl}, TensorRole::NORM, &w.per_layer_proj_norm);
  bool first_global = true;
  for (int il = 0; il < hp.n_layer; il++) {
    const LayerConfig& c = hp.layers[size_t(il)];
    LayerWeights& L = w.layers[size_t(il)];
    const bool has_kv = c.owns_kv(il);
    const int64_t q = c.n_embd_q(), kv = c.n_embd_kv();
    list.add(blk(il, "attn_norm.weight"), {d}, TensorRole::NORM, &L.attn_norm);
    list.linear(blk(il, "attn_qkv"), d, q + 2 * kv, L.qkv, {.need = TensorNeed::OPTIONAL, .synthetic = Synthetic::NO});
    list.linear(blk(il, "attn_q"), d, q, L.q, {.need = TensorNeed::OPTIONAL, .synthetic = Synthetic::YES});
    const LinearSpec kv_spec{.need = TensorNeed::OPTIONAL, .synthetic = has_kv ? Synthetic::YES : Synthetic::NO};
    list.linear(blk(il, "attn_k"), d, kv, L.k, kv_spec);
    list.linear(blk(il, "attn_v"), d, kv, L.v, kv_spec);  // absent: V is K's projection
    if (has_kv)
      list.one_of({blk(il, "attn_qkv.weight")}, {blk(il, "attn_q.weight"), blk(il, "attn_k.weight")});
    else
      list.one_of({blk(il, "attn_qkv.weight")}, {blk(il, "attn_q.weight")});
    list.linear(blk(il, "attn_output"), q, d, L.o);
    list.add(blk(il, "attn_q_norm.weight"), {c.head_dim}, TensorRole::NORM, &L.q_norm);
    list.add(blk(il, "attn_k_norm.weight"), {c.head_dim}, TensorRole::NORM, &L.k_norm,
             has_kv ? TensorNeed::REQUIRED : TensorNeed::OPTIONAL);
    list.add(blk(il, "post_attention_norm.weight"), {d}, TensorRole::NORM, &L.attn_post_norm);
    list.add(blk(il, "layer_output_scale.weight"), {1}, TensorRole::SCALE, &L.out_scale, TensorNeed::OPTIONAL);
    if (c.attn == AttnKind::FULL && first_global) {  // global layers share one rope_freqs
      list.add("rope_freqs.weight", {c.head_dim / 2}, TensorRole::FACTORS, &w.rope_freqs);
      first_global = false;
    }
    ffn_tensors(list, hp, il, L, {.post_norm = true});
    list.add(blk(il, "inp_gate.weight"), {d, n_pl}, TensorRole::MATRIX, &L.ple_gate.w);
    list.add(blk(il, "proj.weight"), {n_pl, d}, TensorRole::MATRIX, &L.ple_proj.w);
    list.add(blk(il, "post_norm.weight"), {d}, TensorRole::NORM, &L.ple_post_norm);
  }
}

// Every layer's input from the per-layer embeddings: (the token's slice of per_layer_tok_embd
// * sqrt(n_pl) + rms_norm(per_layer_model_proj x / sqrt(n_embd))) / sqrt(2), as
// (n_pl, n, n_layer): slice il is layer il's.
Tensor* per_layer_inputs(Forward& f, Tensor* x) {
  const int64_t n_pl = f.hp.n_embd_per_layer, n_layer = f.hp.n_layer, n = f.n;
  Tensor* tok = get_rows(f.c, f.w.per_layer_tok_embd, f.tokens);  // (n_pl * n_layer, n)
  tok = scale(f.c, reshape(f.c, tok, {n_pl, n_layer, n}), std::sqrt(float(n_pl)));
  Tensor* proj = scale(f.c, mul_mat(f.c, f.w.per_layer_model_proj, x), 1.0f / std::sqrt(float(f.hp.n_embd)));
  proj = norm(f, reshape(f.c, proj, {n_pl, n_layer, n}), f.w.per_layer_proj_norm);
  Tensor* in = scale(f.c, add(f.c, proj, tok), 1.0f / std::sqrt(2.0f));
  return cont(f.c, permute(f.c, in, 0, 2, 1, 3));
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, std::sqrt(float(f.hp.n_embd)));
  Tensor* pl = per_layer_inputs(f, x);
  const int64_t n_pl = f.hp.n_embd_per_layer;
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerConfig& c = f.hp.layers[size_t(il)];
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* freq_factors = c.attn == AttnKind::FULL ? f.w.rope_freqs : nullptr;
    Tensor* h = norm(f, x, L.attn_norm);
    Tensor *q, *k = nullptr, *v = nullptr;
    if (L.qkv) {
      const Qkv t = qkv(f, il, h);
      q = t.q, k = t.k, v = t.v;
    } else {
      q = reshape(f.c, linear(f, L.q, h), {c.head_dim, c.n_head, f.n});
      if (c.owns_kv(il)) {
        k = reshape(f.c, linear(f, L.k, h), {c.head_dim, c.n_head_kv, f.n});
        v = L.v ? reshape(f.c, linear(f, L.v, h), {c.head_dim, c.n_head_kv, f.n}) : k;
      }
    }
    q = rope(f, il, norm(f, q, L.q_norm), freq_factors);
    if (c.owns_kv(il)) {
      v = norm(f, v, nullptr);
      k = rope(f, il, norm(f, k, L.k_norm), freq_factors);
    } else {
      k = v = nullptr;
    }
    Tensor* attn = linear(f, L.o, attend(f, il, q, k, v, f.hp.attention_scale));
    x = named(add(f.c, norm(f, attn, L.attn_post_norm), x), "ffn_inp", il);
    x = add(f.c, norm(f, ffn(f, il, norm(f, x, L.ffn_norm), Glu::GEGLU), L.ffn_post_norm), x);
    // The per-layer input, gated by this layer's output.
    Tensor* g = unary(f.c, mm(f, L.ple_gate.w, x), Unary::GELU);  // (n_pl, n)
    g = mul(f.c, g, view(f.c, pl, {n_pl, f.n}, {pl->nb[1]}, size_t(il) * pl->nb[2]));
    x = add(f.c, x, norm(f, mm(f, L.ple_proj.w, g), L.ple_post_norm));
    if (L.out_scale) x = mul(f.c, x, L.out_scale);
  }
  Tensor* logits = lm_head(f, x);
  return logits ? softcap(f, logits, f.hp.final_softcap) : nullptr;
}

}  // namespace

extern const Arch arch_gemma4{{"gemma4"}, RopeMode::NEOX, read, tensors, build};

}  // namespace hart
