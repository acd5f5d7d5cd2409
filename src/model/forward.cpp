#include "model/forward.h"

#include <cmath>
#include <limits>

namespace hart {
namespace {

Tensor* input(Context& c, Type type, int64_t n, void* data, const char* name) {
  const int64_t ne[1] = {n};
  Tensor* t = c.new_leaf(type, ne, data);
  t->flags |= kFlagInput;
  t->set_name("%s", name);
  return t;
}

// x (n, t) -> rms_norm(x) * w, with w (n,) broadcast over rows.
Tensor* norm(Context& c, Tensor* x, Tensor* w, float eps) { return mul(c, rms_norm(c, x, eps), w); }

Tensor* linear(Context& c, Tensor* w, Tensor* b, Tensor* x) {
  Tensor* y = mul_mat(c, w, x);  // W (k, n) @ x (k, t) -> y (n, t)
  return b ? add(c, y, b) : y;
}

}  // namespace

void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache,
                            std::span<const int32_t> tokens, int n_past, bool all_logits) {
  const HParams& hp = m.hp;
  Context& c = fg.ctx;
  const int64_t n = int64_t(tokens.size());
  const int64_t n_kv = n_past + n;
  const int64_t hd = hp.head_dim;

  fg.tokens.assign(tokens.begin(), tokens.end());
  fg.pos.resize(n);
  fg.slots.resize(n);
  for (int64_t i = 0; i < n; i++) fg.pos[i] = int32_t(n_past + i), fg.slots[i] = n_past + i;
  // Token i (at position n_past + i) sees cache rows 0 .. n_past + i.
  fg.mask.assign(size_t(n * n_kv), 0.0f);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = n_past + i + 1; j < n_kv; j++)
      fg.mask[i * n_kv + j] = -std::numeric_limits<float>::infinity();

  Tensor* inp_tokens = input(c, Type::I32, n, fg.tokens.data(), "inp_tokens");
  Tensor* inp_pos = input(c, Type::I32, n, fg.pos.data(), "inp_pos");
  Tensor* inp_slots = input(c, Type::I64, n, fg.slots.data(), "inp_slots");
  const int64_t mask_ne[2] = {n_kv, n};
  Tensor* mask = c.new_leaf(Type::F32, mask_ne, fg.mask.data());
  mask->flags |= kFlagInput;
  mask->set_name("inp_mask");

  const float attn_scale = 1.0f / std::sqrt(float(hd));
  Tensor* x = get_rows(c, m.tok_embd, inp_tokens);  // (n_embd, n)

  for (int il = 0; il < hp.n_layer; il++) {
    const LayerWeights& L = m.layers[il];

    // ---- attention ----
    Tensor* h = norm(c, x, L.attn_norm, hp.rms_eps);
    Tensor* q = reshape(c, linear(c, L.wq, L.bq, h), {hd, hp.n_head, n});     // (hd, n_head, n)
    Tensor* k = reshape(c, linear(c, L.wk, L.bk, h), {hd, hp.n_head_kv, n});  // (hd, n_head_kv, n)
    Tensor* v = linear(c, L.wv, L.bv, h);                                      // (n_embd_kv, n)
    if (L.q_norm) q = norm(c, q, L.q_norm, hp.rms_eps);  // Qwen3: RMS norm per head
    if (L.k_norm) k = norm(c, k, L.k_norm, hp.rms_eps);
    q = rope(c, q, inp_pos, m.rope_freqs, hp.rope_mode, hp.n_rot, hp.rope_base, hp.rope_freq_scale);
    k = rope(c, k, inp_pos, m.rope_freqs, hp.rope_mode, hp.n_rot, hp.rope_base, hp.rope_freq_scale);

    // Append K, V to the cache, then attend over all n_kv cached positions.
    Tensor* kc = set_rows(c, cache.k(il), reshape(c, k, {hp.n_embd_kv(), n}), inp_slots);
    Tensor* vc = set_rows(c, cache.v(il), v, inp_slots);
    const size_t elt = type_info(cache.type()).type_size;
    Tensor* kv_k = view(c, kc, {hd, hp.n_head_kv, n_kv}, {hd * elt, kc->nb[1]}, 0);
    Tensor* kv_v = view(c, vc, {hd, hp.n_head_kv, n_kv}, {hd * elt, vc->nb[1]}, 0);
    Tensor* attn = flash_attn_ext(c, q, kv_k, kv_v, mask, attn_scale);  // (hd, n_head, n)
    x = add(c, x, mul_mat(c, L.wo, reshape(c, attn, {hp.n_embd_q(), n})));

    // ---- feed-forward (SwiGLU) ----
    h = norm(c, x, L.ffn_norm, hp.rms_eps);
    Tensor* ff = glu(c, mul_mat(c, L.ffn_gate, h), mul_mat(c, L.ffn_up, h), Glu::SWIGLU);
    x = add(c, x, mul_mat(c, L.ffn_down, ff));
  }

  if (!all_logits && n > 1) x = view(c, x, {hp.n_embd, 1}, {x->nb[1]}, size_t(n - 1) * x->nb[1]);
  x = norm(c, x, m.output_norm, hp.rms_eps);
  fg.logits = mul_mat(c, m.output, x);  // (n_vocab, n or 1)
  fg.logits->set_name("logits");
  fg.graph = build_graph({fg.logits});
}

}  // namespace hart
