#include "model/blocks.h"

#include <cmath>
#include <tuple>

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
Tensor* biased(Context& c, Tensor* x, Tensor* b) { return b ? add(c, x, b) : x; }

}  // namespace

Tensor* ffn_linear(Forward& f, const Linear& l, Tensor* x, bool with_scale) {
  Tensor* y = biased(f.c, mul_mat(f.c, l.w, x), l.b);
  return with_scale ? scaled(f.c, y, l.s) : y;
}

Tensor* embed(Forward& f, float scale) {
  Tensor* x = get_rows(f.c, f.w.tok_embd, f.tokens);  // (n_embd, n)
  return scale == 0.0f || scale == 1.0f ? x : hart::scale(f.c, x, scale);
}

Tensor* norm(Forward& f, Tensor* x, Tensor* w) {
  Tensor* y = rms_norm(f.c, x, f.hp.rms_eps);
  return w ? mul(f.c, y, w) : y;
}

Tensor* linear(Forward& f, const Linear& l, Tensor* x) {
  return biased(f.c, scaled(f.c, mul_mat(f.c, l.w, x), l.s), l.b);
}

Qkv qkv(Forward& f, int il, Tensor* h) {
  const LayerConfig& cfg = config(f, il);
  const LayerWeights& L = weights(f, il);
  const int64_t hd = cfg.head_dim, nh = cfg.n_head, nkv = cfg.n_head_kv, n = h->ne[1];
  if (L.qkv) {  // one matrix, (n_embd, (nh + 2 nkv) hd): Q, K and V are views of each output row
    Tensor* y = linear(f, L.qkv, h);
    const size_t e = sizeof(float), row = y->nb[1];
    return {view(f.c, y, {hd, nh, n}, {hd * e, row}, 0), view(f.c, y, {hd, nkv, n}, {hd * e, row}, nh * hd * e),
            view(f.c, y, {hd, nkv, n}, {hd * e, row}, (nh + nkv) * hd * e)};
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
  } else {  // a layer sharing an earlier layer's cache, as written in this step
    std::tie(kc, vc) = f.kv_written.at(size_t(cfg.kv_layer));
  }
  Tensor* attn = paged_attn(f.c, q, pool_view(f.c, kc, cfg.head_dim), pool_view(f.c, vc, cfg.head_dim),
                            f.attn_index[int(pool)], kq_scale);  // (hd, n_head, n)
  return reshape(f.c, attn, {int64_t(cfg.n_embd_q()), q->ne[2]});
}

Tensor* rope_factors(Forward& f) {
  if (f.w.rope_freqs) return f.w.rope_freqs;
  return f.n_ctx > f.hp.n_ctx_orig ? f.w.rope_long : f.w.rope_short;
}

Tensor* attention(Forward& f, int il, Tensor* h, Tensor* freq_factors, float kq_scale) {
  const LayerWeights& L = weights(f, il);
  auto [q, k, v] = qkv(f, il, h);
  if (L.q_norm) q = norm(f, q, L.q_norm);  // per head
  if (L.k_norm) k = norm(f, k, L.k_norm);
  q = rope(f, il, q, freq_factors);
  k = rope(f, il, k, freq_factors);
  return linear(f, L.o, attend(f, il, q, k, v, kq_scale));
}

Tensor* ffn(Forward& f, int il, Tensor* h, Glu act, bool with_scales) {
  const LayerWeights& L = weights(f, il);
  Tensor* up = ffn_linear(f, L.up, h, with_scales);
  Tensor* gate = ffn_linear(f, L.gate, h, with_scales);
  return ffn_linear(f, L.down, glu(f.c, gate, up, act), with_scales);
}

Tensor* prenorm_layer(Forward& f, int il, Tensor* x, const PrenormLayer& o) {
  const LayerWeights& L = weights(f, il);
  x = add(f.c, attention(f, il, norm(f, x, L.attn_norm), o.freq_factors, f.hp.kq_scale(il)), x);
  return add(f.c, ffn(f, il, norm(f, x, L.ffn_norm), Glu::SWIGLU, o.ffn_scales), x);
}

Tensor* state_read(Forward& f, int il, int part, const SeqRun& r) {
  return get_rows(f.c, f.store.state(il, part), r.read);
}

void state_write(Forward& f, int il, int part, const SeqRun& r, Tensor* value, Tensor* read) {
  Tensor* state = f.store.state(il, part);
  Tensor* v = reshape(f.c, value->is_contiguous() ? value : cont(f.c, value), {state->ne[0], r.n_seq});
  f.writes.push_back(set_rows(f.c, state, v, r.write, read));
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

Tensor* lm_head(Forward& f, Tensor* x) {
  x = f.output_rows(x);
  if (!x) return nullptr;
  return linear(f, f.w.output, norm(f, x, f.w.output_norm));  // (n_vocab, n_out)
}

}  // namespace hart
