// qwen35, qwen35moe: Qwen 3.5 dense and mixture of experts (llama.cpp src/models/qwen35.cpp,
// qwen35moe.cpp: the same graph but for the feed-forward). A hybrid: Gated DeltaNet layers
// (src/model/delta_net.h) and, every full_attention_interval-th layer, gated attention (each
// head's query projection also yields an output gate, sigmoid(gate) * attention; per-head Q/K
// RMS norms; partial RoPE). Each layer's feed-forward reads post_attention_norm(x); qwen35moe's
// is routed experts (renormalized, scaled) plus a shared expert behind a sigmoid gate.
// The file's RoPE is multi-section (IMROPE); for text every section takes the token's position,
// except the fourth, which takes 0: equal to NEOX RoPE as long as no rotated pair falls in the
// fourth section, which read() checks.
// A file may end with multi-token-prediction blocks (`nextn_predict_layers`, Qwen 3.5's MTP):
// full-attention decoder blocks with a projection of the next token's embedding and the trunk's
// hidden state in front. They are loaded (HParams::nextn_layers, Weights::nextn) but not run by
// the forward pass, as llama.cpp skips them; arch_qwen35_mtp below is their own graph.
#include "model/arch.h"
#include "model/blocks.h"
#include "model/delta_net.h"
#include "model/layer_tensors.h"
#include "model/node_names.h"

#include "common/error.h"

namespace hart {
namespace {

// llama.cpp's interleaved M-RoPE sector rule (ggml_mrope_cache_init): rotated pair p takes the
// fourth position (0 for text) unless p % sum(sections) lands in one of the first three.
void check_rope_sections(const KeyReader& k, const HParams& hp) {
  const auto s = k.opt_array("rope.dimension_sections");
  if (!s || s->size() != 4) throw Error(hp.arch_name + ".rope.dimension_sections must hold 4 numbers");
  const int64_t sum = (*s)[0] + (*s)[1] + (*s)[2] + (*s)[3];
  if (sum <= 0) throw Error(hp.arch_name + ".rope.dimension_sections must not all be 0");
  for (int64_t p = 0; p < hp.n_rot / 2; p++) {
    const int64_t sector = p % sum;
    const bool text = (sector % 3 == 1 && sector < 3 * (*s)[1]) || (sector % 3 == 2 && sector < 3 * (*s)[2]) ||
                      (sector % 3 == 0 && sector < 3 * (*s)[0]);
    if (!text)
      throw Error(hp.arch_name + ".rope.dimension_sections: rotated pair " + std::to_string(p) +
                  " takes the fourth (vision) position, which is not supported");
  }
}

// The last n blocks are the MTP blocks: out of the trunk, always full attention (llama.cpp marks
// them non-recurrent whatever the recurrent-layer keys say).
void split_nextn(HParams& hp, int n) {
  hp.n_layer -= n;
  for (int il = hp.n_layer; il < hp.n_layer + n; il++) {
    LayerConfig c = hp.layers[size_t(il)];
    if (c.n_head <= 0) throw Error(hp.arch_name + ": multi-token-prediction block " + std::to_string(il) + " has no heads");
    c.attn = AttnKind::FULL, c.recurrent = RecurrentKind::NONE, c.state.clear();
    hp.nextn_layers.push_back(c);
  }
  hp.layers.resize(size_t(hp.n_layer));
}

void read(const KeyReader& k, HParams& hp) {
  hp.rms_eps = k.req_float("attention.layer_norm_rms_epsilon");
  const int64_t nextn = k.opt_int("nextn_predict_layers").value_or(0);
  if (nextn < 0 || nextn >= hp.n_layer)
    throw Error(hp.arch_name + ".nextn_predict_layers " + std::to_string(nextn) + " must be in [0, block_count " +
                std::to_string(hp.n_layer) + ")");
  check_rope_sections(k, hp);
  read_delta_net(k, hp);  // over every block: a per-layer key counts the MTP blocks too
  if (hp.arch_name == "qwen35moe") {
    hp.n_ff_shexp = int(k.opt_int("expert_shared_feed_forward_length").value_or(hp.layers[0].n_ff));
    read_moe(k, hp, "expert_feed_forward_length");
  }
  if (nextn > 0) split_nextn(hp, int(nextn));
}

// Layer il's decoder block: its attention or delta net, its feed-forward (`all`: the trunk's
// layers and the MTP blocks after them, so that il indexes either).
void block_tensors(const HParams& all, int il, LayerWeights& L, TensorList& list) {
  if (all.layers[size_t(il)].recurrent == RecurrentKind::DELTA_NET) {
    list.add(blk(il, "attn_norm.weight"), {all.n_embd}, TensorRole::NORM, &L.attn_norm);
    list.add(blk(il, "post_attention_norm.weight"), {all.n_embd}, TensorRole::NORM, &L.attn_post_norm);
    delta_net_tensors(list, all, il, L.delta_net);
  } else {
    attention_tensors(list, all, il, L, {.qk_norm = true, .post_norm = true, .q_gate = true});
  }
  if (all.layers[size_t(il)].ffn == FfnKind::MOE)
    moe_tensors(list, all, il, L,
                {.scale_used = true, .gate_up = true, .pre_norm = false, .shexp_scales = true, .shexp_gate = true});
  else
    ffn_tensors(list, all, il, L, {.pre_norm = false});
}

// An MTP block's own tensors, with llama.cpp's names (llama-arch.cpp's LLM_TENSOR_NEXTN_*).
void nextn_tensors(const HParams& hp, int il, NextN& nx, TensorList& list) {
  const int64_t d = hp.n_embd;
  list.linear(blk(il, "nextn.eh_proj"), 2 * d, d, nx.eh_proj);
  list.add(blk(il, "nextn.enorm.weight"), {d}, TensorRole::NORM, &nx.enorm);
  list.add(blk(il, "nextn.hnorm.weight"), {d}, TensorRole::NORM, &nx.hnorm);
  list.add(blk(il, "nextn.embed_tokens.weight"), {d, hp.n_vocab}, TensorRole::EMBED, &nx.embed_tokens,
           TensorNeed::OPTIONAL);
  list.add(blk(il, "nextn.shared_head_norm.weight"), {d}, TensorRole::NORM, &nx.shared_head_norm, TensorNeed::OPTIONAL);
  list.linear(blk(il, "nextn.shared_head_head"), d, hp.n_vocab, nx.shared_head_head, {.need = TensorNeed::OPTIONAL});
}

void tensors(const HParams& hp, Weights& w, TensorList& list) {
  head_tensors(list, hp, w);
  HParams all = hp;
  all.layers.insert(all.layers.end(), hp.nextn_layers.begin(), hp.nextn_layers.end());
  for (int il = 0; il < hp.n_layer; il++) block_tensors(all, il, w.layers[size_t(il)], list);
  w.nextn.resize(hp.nextn_layers.size());
  for (size_t i = 0; i < w.nextn.size(); i++) {
    const int il = hp.n_layer + int(i);
    block_tensors(all, il, w.nextn[i], list);
    nextn_tensors(hp, il, w.nextn[i].nextn, list);
  }
}

// Attention whose query projection holds, per head, the query and then an output gate.
Tensor* gated_attention(Forward& f, int il, Tensor* h) {
  const LayerConfig& c = f.hp.layers[size_t(il)];
  const LayerWeights& L = f.w.layers[size_t(il)];
  const int64_t hd = c.head_dim, nh = c.n_head, n = h->ne[1];
  const size_t e = sizeof(float);
  Tensor* qg = linear(f, L.q, h);  // (2 hd nh, n)
  Tensor* q = view(f.c, qg, {hd, nh, n}, {2 * hd * e, qg->nb[1]}, 0);
  Tensor* gate = view(f.c, qg, {hd, nh, n}, {2 * hd * e, qg->nb[1]}, hd * e);
  Tensor* k = reshape(f.c, linear(f, L.k, h), {hd, c.n_head_kv, n});
  Tensor* v = reshape(f.c, linear(f, L.v, h), {hd, c.n_head_kv, n});
  q = rope(f, il, norm(f, q, L.q_norm), nullptr);
  k = rope(f, il, norm(f, k, L.k_norm), nullptr);
  Tensor* attn = attend(f, il, q, k, v, f.hp.kq_scale(il));  // (hd nh, n)
  attn = mul(f.c, attn, reshape(f.c, unary(f.c, gate, Unary::SIGMOID), {hd * nh, n}));
  return linear(f, L.o, attn);
}

// The feed-forward of layer il: dense, or the routed experts plus the gated shared expert.
Tensor* feed_forward(Forward& f, int il, Tensor* h) {
  if (f.hp.layers[size_t(il)].ffn == FfnKind::DENSE) return ffn(f, il, h, Glu::SWIGLU);
  const LayerWeights& L = f.w.layers[size_t(il)];
  Tensor* shared = glu_ffn(f, L.gate_shexp, L.up_shexp, L.down_shexp, h, Glu::SWIGLU, true);
  Tensor* gate = unary(f.c, mul_mat(f.c, L.gate_inp_shexp, h), Unary::SIGMOID);  // (1, n)
  return add(f.c, moe_ffn(f, il, h, {.norm_weights = true, .scales = true}), mul(f.c, shared, gate));
}

Tensor* build(Forward& f) {
  Tensor* x = embed(f, 1.0f);
  for (int il = 0; il < f.hp.n_layer; il++) {
    const LayerWeights& L = f.w.layers[size_t(il)];
    Tensor* h = norm(f, x, L.attn_norm);
    const bool recurrent = f.hp.layers[size_t(il)].recurrent == RecurrentKind::DELTA_NET;
    x = named(add(f.c, recurrent ? delta_net(f, il, h) : gated_attention(f, il, h), x), "ffn_inp", il);
    x = named(add(f.c, feed_forward(f, il, norm(f, x, L.attn_post_norm)), x), "l_out", il);
  }
  return lm_head(f, x);
}

// An MTP block, the one layer of a model of its own (model/mtp_model.h): each token of the batch
// comes with the hidden state it follows (the batch's embeddings), that of the trunk after its
// output norm at the position before, or the block's own after the previous draft step.
// llama.cpp's qwen35 graph_mtp: [enorm(embedding); hnorm(h)] through eh_proj, the decoder block,
// then the shared head (shared_head_norm / _head, else the model's output norm and matrix).
Tensor* build_mtp(Forward& f) {
  if (!f.embd) throw Error("qwen35 MTP block: the batch holds no hidden states");
  const LayerWeights& L = f.w.layers[0];
  const NextN& nx = L.nextn;
  Tensor* e = named(get_rows(f.c, nx.embed_tokens ? nx.embed_tokens : f.w.tok_embd, f.tokens), "mtp_tok_embd");
  Tensor* eh = concat(f.c, norm(f, e, nx.enorm), norm(f, f.embd, nx.hnorm), 0);  // (2 n_embd, n)
  Tensor* x = named(linear(f, nx.eh_proj, eh), "mtp_eh_proj");
  x = named(add(f.c, gated_attention(f, 0, norm(f, x, L.attn_norm)), x), "ffn_inp", 0);
  x = named(add(f.c, feed_forward(f, 0, norm(f, x, L.attn_post_norm)), x), "l_out", 0);
  const Linear& head = nx.shared_head_head ? nx.shared_head_head : f.w.output;
  return output_head(f, x, nx.shared_head_norm ? nx.shared_head_norm : f.w.output_norm, head);
}

}  // namespace

extern const Arch arch_qwen35{{"qwen35", "qwen35moe"}, RopeMode::NEOX, read, tensors, build};
// Not in the registry (no file names it): model/mtp_model.cpp builds the model it runs.
extern const Arch arch_qwen35_mtp{{}, RopeMode::NEOX, read, tensors, build_mtp};

}  // namespace hart
