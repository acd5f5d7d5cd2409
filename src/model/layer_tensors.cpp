#include "model/layer_tensors.h"

namespace hart {

void head_tensors(TensorList& list, const HParams& hp, Weights& w, const char* norm_name, Bias output_bias) {
  const int64_t d = hp.n_embd;
  list.add("token_embd.weight", {d, hp.n_vocab}, TensorRole::EMBED, &w.tok_embd);
  list.add(std::string(norm_name) + ".weight", {d}, TensorRole::NORM, &w.output_norm);
  list.linear("output", d, hp.n_vocab, w.output, {.need = TensorNeed::OPTIONAL, .bias = output_bias});
}

void rope_factor_tensors(TensorList& list, const HParams& hp, Weights& w) {
  const int64_t half = hp.n_rot / 2;
  if (hp.rope_scaling == RopeScaling::LONGROPE) {
    list.add("rope_factors_long.weight", {half}, TensorRole::FACTORS, &w.rope_long, TensorNeed::OPTIONAL);
    list.add("rope_factors_short.weight", {half}, TensorRole::FACTORS, &w.rope_short, TensorNeed::OPTIONAL);
  } else {
    list.add("rope_freqs.weight", {half}, TensorRole::FACTORS, &w.rope_freqs, TensorNeed::OPTIONAL);
  }
}

void attention_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const AttnSpec& s) {
  const LayerConfig& c = hp.layers[size_t(il)];
  const int64_t d = hp.n_embd, q = c.n_embd_q() * (s.q_gate ? 2 : 1), kv = c.n_embd_kv();
  list.add(blk(il, "attn_norm.weight"), {d}, TensorRole::NORM, &L.attn_norm);
  list.linear(blk(il, "attn_qkv"), d, q + 2 * kv, L.qkv,
              {.need = TensorNeed::OPTIONAL, .bias = Bias::OPTIONAL, .synthetic = s.fused_typical ? Synthetic::YES : Synthetic::NO});
  const LinearSpec sep{.need = TensorNeed::OPTIONAL, .bias = s.qkv_bias,
                       .synthetic = s.fused_typical ? Synthetic::NO : Synthetic::YES};
  list.linear(blk(il, "attn_q"), d, q, L.q, sep);
  list.linear(blk(il, "attn_k"), d, kv, L.k, sep);
  list.linear(blk(il, "attn_v"), d, kv, L.v, sep);
  list.one_of({blk(il, "attn_qkv.weight")}, {blk(il, "attn_q.weight"), blk(il, "attn_k.weight"), blk(il, "attn_v.weight")});
  list.linear(blk(il, "attn_output"), c.n_embd_q(), d, L.o, {.bias = s.o_bias});
  if (s.qk_norm) {
    list.add(blk(il, "attn_q_norm.weight"), {c.head_dim}, TensorRole::NORM, &L.q_norm);
    list.add(blk(il, "attn_k_norm.weight"), {c.head_dim}, TensorRole::NORM, &L.k_norm);
  }
  if (s.post_norm) list.add(blk(il, "post_attention_norm.weight"), {d}, TensorRole::NORM, &L.attn_post_norm);
}

void ffn_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const FfnSpec& s) {
  const LayerConfig& c = hp.layers[size_t(il)];
  const int64_t d = hp.n_embd, ff = c.n_ff;
  const LinearSpec lin{.bias = s.bias, .scale_used = s.scale_used};
  if (s.pre_norm) list.add(blk(il, "ffn_norm.weight"), {d}, TensorRole::NORM, &L.ffn_norm);
  if (s.fused_up) {
    list.linear(blk(il, "ffn_up"), d, 2 * ff, L.up, lin);
  } else {
    list.linear(blk(il, "ffn_gate"), d, ff, L.gate, lin);
    list.linear(blk(il, "ffn_up"), d, ff, L.up, lin);
  }
  list.linear(blk(il, "ffn_down"), ff, d, L.down, lin);
  if (s.post_norm) list.add(blk(il, "post_ffw_norm.weight"), {d}, TensorRole::NORM, &L.ffn_post_norm);
}

void moe_tensors(TensorList& list, const HParams& hp, int il, LayerWeights& L, const MoeSpec& s) {
  const LayerConfig& c = hp.layers[size_t(il)];
  const int64_t d = hp.n_embd, ff = c.n_ff, E = hp.n_expert;
  const LinearSpec exps{.scale_used = s.scale_used};
  if (s.pre_norm) list.add(blk(il, "ffn_norm.weight"), {d}, TensorRole::NORM, &L.ffn_norm);
  list.linear(blk(il, "ffn_gate_inp"), d, E, L.gate_inp, {.scale_used = false});
  const TensorNeed gate_need = s.gate_optional || s.gate_up ? TensorNeed::OPTIONAL : TensorNeed::REQUIRED;
  if (s.gate_up) {  // llama.cpp's create_tensor_gate_up_exps; the fused matrix's scale goes unused
    list.experts(blk(il, "ffn_gate_up_exps"), d, 2 * ff, E, L.gate_up_exps,
                 {.need = TensorNeed::OPTIONAL, .scale_used = false, .synthetic = Synthetic::NO});
    list.one_of({blk(il, "ffn_gate_up_exps.weight")}, {blk(il, "ffn_gate_exps.weight"), blk(il, "ffn_up_exps.weight")});
  }
  list.experts(blk(il, "ffn_gate_exps"), d, ff, E, L.gate_exps,
               {.need = gate_need, .scale_used = s.scale_used, .synthetic = Synthetic::YES});
  list.experts(blk(il, "ffn_up_exps"), d, ff, E, L.up_exps,
               {.need = s.gate_up ? TensorNeed::OPTIONAL : TensorNeed::REQUIRED, .scale_used = s.scale_used,
                .synthetic = Synthetic::YES});
  list.experts(blk(il, "ffn_down_exps"), ff, d, E, L.down_exps, exps);
  if (hp.n_ff_shexp > 0) {
    const int64_t sh = hp.n_ff_shexp;
    const LinearSpec shexp{.scale_used = s.shexp_scales};
    list.linear(blk(il, "ffn_gate_shexp"), d, sh, L.gate_shexp, shexp);
    list.linear(blk(il, "ffn_up_shexp"), d, sh, L.up_shexp, shexp);
    list.linear(blk(il, "ffn_down_shexp"), sh, d, L.down_shexp, shexp);
    if (s.shexp_gate) list.add(blk(il, "ffn_gate_inp_shexp.weight"), {d}, TensorRole::MATRIX, &L.gate_inp_shexp);
  }
}

void decoder_tensors(TensorList& list, const HParams& hp, Weights& w, const AttnSpec& attn, const FfnSpec& ffn) {
  for (int il = 0; il < hp.n_layer; il++) {
    attention_tensors(list, hp, il, w.layers[size_t(il)], attn);
    ffn_tensors(list, hp, il, w.layers[size_t(il)], ffn);
  }
}

}  // namespace hart
