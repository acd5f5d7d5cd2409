#include "model/blocks.h"

#include <cmath>
#include <tuple>

#include "common/error.h"
#include "model/lora.h"
#include "model/node_names.h"

namespace hart {
namespace {

const LayerConfig& config(const Forward& f, int il) { return f.hp.layers[size_t(il)]; }
const LayerWeights& weights(const Forward& f, int il) { return f.w.layers[size_t(il)]; }

kv::Pool pool_of(const LayerConfig& l) { return l.attn == AttnKind::SLIDING ? kv::Pool::WINDOW : kv::Pool::FULL; }

// (head_dim, heads, n) as (head_dim * heads, n): a reshape, or a view when x is a view into a
// wider row (the fused qkv output), whose heads are still adjacent within a token.
Tensor* flatten_heads(Context& c, Tensor* x) {
  if (x->is_contiguous()) return reshape(c, x, {x->ne[0] * x->ne[1], x->ne[2]});
  return view(c, x, {x->ne[0] * x->ne[1], x->ne[2]}, {x->nb[2]}, 0);
}

// The whole cache written by `written` (a SET_ROWS) as (head_dim, n_head_kv, n_slots).
Tensor* pool_view(Context& c, Tensor* written, int64_t head_dim) {
  const size_t elt = type_info(written->type).type_size;
  return view(c, written, {head_dim, written->ne[0] / head_dim, written->ne[1]}, {head_dim * elt, written->nb[1]}, 0);
}

Tensor* scaled(Context& c, Tensor* x, Tensor* s) { return s ? mul(c, x, s) : x; }

// The Q or K norm: per head (w (head_dim,)), or over each token's whole row (w (heads * head_dim,)).
Tensor* qk_norm(Forward& f, Tensor* x, Tensor* w) {
  if (w->ne[0] == x->ne[0]) return norm(f, x, w);
  return reshape(f.c, norm(f, flatten_heads(f.c, x), w), {x->ne[0], x->ne[1], x->ne[2]});
}
Tensor* biased(Context& c, Tensor* x, Tensor* b) { return b ? add(c, x, b) : x; }

}  // namespace

Tensor* lora_add(Forward& f, Tensor* w, Tensor* x, Tensor* y, Tensor* ids) {
  for (size_t i = 0; i < f.lora_used.size(); i++) {
    const LoraPair* p = f.lora_used[i] ? f.m.loras[i]->find(w) : nullptr;
    if (!p) continue;
    Tensor* ab = ids ? mul_mat_id(f.c, p->b, mul_mat_id(f.c, p->a, x, ids), ids) : mul_mat(f.c, p->b, mul_mat(f.c, p->a, x));
    Tensor* s = f.lora_scale(i, p->rank());  // (1, rows)
    const int64_t rows = s->ne[1];
    if (ids) s = reshape(f.c, s, {1, 1, rows});
    else if (ab->nrows() == rows) s = reshape(f.c, s, {1, ab->ne[1], ab->ne[2], ab->ne[3]});
    else throw Error(std::string("LoRA: the product of '") + w->name + "' is not one row per token");
    y = add(f.c, y, mul(f.c, ab, s));
  }
  return y;
}

Tensor* mm(Forward& f, Tensor* w, Tensor* x) { return lora_add(f, w, x, mul_mat(f.c, w, x)); }

Tensor* ffn_linear(Forward& f, const Linear& l, Tensor* x, bool with_scale) {
  Tensor* y = biased(f.c, named_after(mm(f, l.w, x), l.w), l.b);
  return named_after(with_scale ? scaled(f.c, y, l.s) : y, l.w);
}

Tensor* embed(Forward& f, float scale) {
  if (f.embd) return f.embd;  // embeddings given (an image's): never scaled, as llama.cpp's gemma3 leaves them
  Tensor* x = named(get_rows(f.c, f.w.tok_embd, f.tokens), "inp_embd");  // (n_embd, n)
  for (size_t i = 0; i < f.lora_used.size(); i++) {  // B A[tokens]: llama.cpp's build_inp_embd
    const LoraPair& p = f.m.loras[i]->embd;
    if (!f.lora_used[i] || !p.a) continue;
    x = add(f.c, x, mul(f.c, mul_mat(f.c, p.b, get_rows(f.c, p.a, f.tokens)), f.lora_scale(i, p.rank())));
  }
  return scale == 0.0f || scale == 1.0f ? x : named(hart::scale(f.c, x, scale), "inp_scaled");
}

Tensor* norm(Forward& f, Tensor* x, Tensor* w) {
  Tensor* y = named(rms_norm(f.c, x, f.hp.rms_eps), "norm");
  return w ? named_after(mul(f.c, y, w), w) : y;
}

Tensor* linear(Forward& f, const Linear& l, Tensor* x) {
  // llama.cpp's order: the product, its scale, the adapters, the bias.
  Tensor* y = scaled(f.c, named_after(mul_mat(f.c, l.w, x), l.w), l.s);
  return named_after(biased(f.c, lora_add(f, l.w, x, y), l.b), l.w);
}

Qkv qkv(Forward& f, int il, Tensor* h) {
  const LayerConfig& cfg = config(f, il);
  const LayerWeights& L = weights(f, il);
  const int64_t hd = cfg.head_dim, nh = cfg.n_head, nkv = cfg.n_head_kv, n = h->ne[1];
  if (L.qkv) {  // one matrix, (n_embd, (nh + 2 nkv) hd): Q, K and V are views of each output row
    Tensor* y = linear(f, L.qkv, h);
    const size_t e = sizeof(float), row = y->nb[1];
    return {named(view(f.c, y, {hd, nh, n}, {hd * e, row}, 0), "Qcur", il),
            named(view(f.c, y, {hd, nkv, n}, {hd * e, row}, nh * hd * e), "Kcur", il),
            named(view(f.c, y, {hd, nkv, n}, {hd * e, row}, (nh + nkv) * hd * e), "Vcur", il)};
  }
  return {reshape(f.c, linear(f, L.q, h), {hd, nh, n}), reshape(f.c, linear(f, L.k, h), {hd, nkv, n}),
          reshape(f.c, linear(f, L.v, h), {hd, nkv, n})};
}

Tensor* rope(Forward& f, int il, Tensor* x, Tensor* freq_factors) {
  const LayerConfig& cfg = config(f, il);
  if (cfg.n_rot == 0) return x;
  return hart::rope(f.c, x, f.pos, freq_factors, f.hp.rope_mode, cfg.n_rot, cfg.rope_base, cfg.rope_freq_scale,
                    f.hp.rope_attn_factor);
}

Tensor* attend(Forward& f, int il, Tensor* q, Tensor* k, Tensor* v, float kq_scale) {
  const LayerConfig& cfg = config(f, il);
  const kv::Pool pool = pool_of(cfg);
  Tensor* kc;
  Tensor* vc;
  if (k) {  // write this step's rows into the layer's cache; attention reads the written cache
    kc = set_rows(f.c, f.store.kv().k(il), flatten_heads(f.c, k), f.slots[int(pool)]);
    vc = set_rows(f.c, f.store.kv().v(il), flatten_heads(f.c, v), f.slots[int(pool)]);
    f.writes.push_back(kc);
    f.writes.push_back(vc);
    f.kv_written[size_t(il)] = {kc, vc};
    f.fg.key_rope[size_t(il)] = k->op == Op::ROPE ? k : nullptr;
  } else {  // a layer sharing an earlier layer's cache, as written in this step
    std::tie(kc, vc) = f.kv_written.at(size_t(cfg.kv_layer));
  }
  Tensor* attn = named(paged_attn(f.c, q, pool_view(f.c, kc, cfg.head_dim), pool_view(f.c, vc, cfg.head_dim),
                                  f.attn_index[int(pool)], kq_scale),
                       "kqv_out", il);  // (hd, n_head, n)
  return reshape(f.c, attn, {int64_t(cfg.n_embd_q()), q->ne[2]});
}

Tensor* rope_factors(Forward& f) {
  if (f.w.rope_freqs) return f.w.rope_freqs;
  return f.n_ctx > f.hp.n_ctx_orig ? f.w.rope_long : f.w.rope_short;
}

Tensor* attention(Forward& f, int il, Tensor* h, Tensor* freq_factors, float kq_scale) {
  const LayerWeights& L = weights(f, il);
  auto [q, k, v] = qkv(f, il, h);
  if (L.q_norm) q = qk_norm(f, q, L.q_norm);
  if (L.k_norm) k = qk_norm(f, k, L.k_norm);
  q = named(rope(f, il, q, freq_factors), "Qcur", il);
  k = named(rope(f, il, k, freq_factors), "Kcur", il);
  return linear(f, L.o, attend(f, il, q, k, v, kq_scale));
}

Tensor* glu_ffn(Forward& f, const Linear& gate, const Linear& up, const Linear& down, Tensor* h, Glu act,
                bool with_scales) {
  Tensor* u = ffn_linear(f, up, h, with_scales);
  Tensor* g = ffn_linear(f, gate, h, with_scales);
  Tensor* a = named(glu(f.c, g, u, act), act == Glu::SWIGLU ? "ffn_swiglu" : "ffn_geglu", layer_of(up.w));
  return ffn_linear(f, down, a, with_scales);
}

Tensor* ffn(Forward& f, int il, Tensor* h, Glu act, bool with_scales) {
  const LayerWeights& L = weights(f, il);
  return named(glu_ffn(f, L.gate, L.up, L.down, h, act, with_scales), "ffn_out", il);
}

Tensor* moe_ffn(Forward& f, int il, Tensor* h, const Moe& o) {
  const LayerWeights& L = weights(f, il);
  const int64_t d = h->ne[0], n = h->ne[1], E = f.hp.n_expert, used = config(f, il).n_expert_used;
  Tensor* logits = named_after(mm(f, L.gate_inp.w, h), L.gate_inp.w);
  Tensor* probs = named(soft_max(f.c, logits, nullptr, 1.0f, 0.0f), "ffn_moe_probs", il);  // (E, n)
  Tensor* ids = named(top_k(f.c, probs, int(used)), "ffn_moe_topk", il);                   // (used, n)
  Tensor* w = named(get_rows(f.c, reshape(f.c, probs, {1, E, n}), ids), "ffn_moe_weights", il);  // (1, used, n)
  if (o.norm_weights) {
    Tensor* w2 = reshape(f.c, w, {used, n});
    // The sum clamped to the smallest normal f16 (llama.cpp's guard against dividing by 0).
    Tensor* sum = clamp(f.c, sum_rows(f.c, w2), 6.103515625e-5f, INFINITY);  // (1, n)
    w = reshape(f.c, named(div(f.c, w2, sum), "ffn_moe_weights_norm", il), {1, used, n});
  }
  // Each chosen expert's projection of x: (k, 1 | used, n) -> (rows, used, n), times its scale.
  const auto experts = [&](const Linear& l, Tensor* x) {
    Tensor* y = named_after(mul_mat_id(f.c, l.w, x, ids), l.w);
    if (o.scales && l.s) {
      Tensor* s = get_rows(f.c, reshape(f.c, l.s, {1, E}), reshape(f.c, ids, {used * n}));  // (1, used n)
      y = mul(f.c, y, reshape(f.c, s, {1, used, n}));
    }
    return lora_add(f, l.w, x, y, ids);  // after the scale, as llama.cpp's build_lora_mm_id
  };
  Tensor* x = reshape(f.c, h, {d, 1, n});
  Tensor* act;
  if (L.gate_up_exps) {  // gate and up fused: the two halves of each output row
    Tensor* gu = experts(L.gate_up_exps, x);  // (2 n_ff, used, n)
    const int64_t ff = gu->ne[0] / 2;
    const auto half = [&](int i) { return view(f.c, gu, {ff, used, n}, {gu->nb[1], gu->nb[2]}, size_t(i * ff) * sizeof(float)); };
    act = named(glu(f.c, half(0), half(1), Glu::SWIGLU), "ffn_moe_swiglu", il);
  } else {
    Tensor* up = experts(L.up_exps, x);
    act = L.gate_exps ? named(glu(f.c, experts(L.gate_exps, x), up, Glu::SWIGLU), "ffn_moe_swiglu", il)
                      : named(unary(f.c, up, Unary::SILU), "ffn_moe_silu", il);
  }
  Tensor* y = named(mul(f.c, experts(L.down_exps, act), w), "ffn_moe_weighted", il);  // (d, used, n)
  // The sum over the chosen experts: views (d, n) of y, one per slot.
  Tensor* out = view(f.c, y, {d, n}, {y->nb[2]}, 0);
  for (int64_t i = 1; i < used; i++) out = add(f.c, out, view(f.c, y, {d, n}, {y->nb[2]}, size_t(i) * y->nb[1]));
  return named(used == 1 ? cont(f.c, out) : out, "ffn_moe_out", il);
}

Tensor* prenorm_layer(Forward& f, int il, Tensor* x, const PrenormLayer& o) {
  const LayerWeights& L = weights(f, il);
  x = named(add(f.c, attention(f, il, norm(f, x, L.attn_norm), o.freq_factors, f.hp.kq_scale(il)), x), "ffn_inp", il);
  return named(add(f.c, ffn(f, il, norm(f, x, L.ffn_norm), Glu::SWIGLU, o.ffn_scales), x), "l_out", il);
}

Tensor* state_read(Forward& f, int il, int part, const SeqRun& r) {
  return get_rows(f.c, f.store.state(il, part), r.read);
}

void state_write(Forward& f, int il, int part, const SeqRun& r, Tensor* value, Tensor* read) {
  Tensor* state = f.store.state(il, part);
  Tensor* v = reshape(f.c, value->is_contiguous() ? value : cont(f.c, value), {state->ne[0], r.n_seq});
  f.writes.push_back(set_rows(f.c, state, v, r.write, read));
}

Tensor* causal_conv(Forward& f, int il, int part, const SeqRun& r, Tensor* x, Tensor* kernel) {
  const int64_t C = x->ne[0], past = kernel->ne[0] - 1;
  Tensor* read = state_read(f, il, part, r);                            // (past * C, n_seq)
  Tensor* sx = concat(f.c, reshape(f.c, read, {past, C, r.n_seq}),
                      cont(f.c, transpose(f.c, x)), 0);                 // (past + n_tok, C, n_seq)
  state_write(f, il, part, r, view(f.c, sx, {past, C, r.n_seq}, {sx->nb[1], sx->nb[2]}, size_t(r.n_tok) * sizeof(float)),
              read);
  return ssm_conv(f.c, sx, kernel);
}

Tensor* join_runs(Forward& f, const std::vector<Tensor*>& outs) {
  Tensor* y = outs.at(0);
  for (size_t i = 1; i < outs.size(); i++) y = concat(f.c, y, outs[i], 1);
  return y;
}

Tensor* softcap(Forward& f, Tensor* x, float c) {
  if (c == 0.0f) return x;
  return scale(f.c, unary(f.c, scale(f.c, x, 1.0f / c), Unary::TANH), c);
}

Tensor* lm_head(Forward& f, Tensor* x) { return output_head(f, x, f.w.output_norm, f.w.output); }

Tensor* output_head(Forward& f, Tensor* x, Tensor* norm_w, const Linear& out) {
  if (f.fg.keep_hidden) {  // the norm is row by row: norming every row first gives the same rows
    f.fg.hidden_all = named(norm(f, x, norm_w), "h_nextn");
    x = f.output_rows(f.fg.hidden_all);
    if (!x) return nullptr;
    f.hidden = x;
  } else {
    x = f.output_rows(x);
    if (!x) return nullptr;
    f.hidden = named(norm(f, x, norm_w), "result_norm");
  }
  // Named here: a tied output matrix is the token embedding.
  return named(linear(f, out, f.hidden), "result_output");  // (n_vocab, n_out)
}

}  // namespace hart
