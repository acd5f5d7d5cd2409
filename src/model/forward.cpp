#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace hart {
namespace {

Tensor* input(Context& c, Type type, int64_t n, void* data, const char* name) {
  const int64_t ne[1] = {n};
  Tensor* t = c.new_leaf(type, ne, data);
  t->flags |= kFlagInput;
  t->set_name("%s", name);
  return t;
}

// The whole cache of layer il as [hd, n_head_kv, n_slots], ordered after `written` (the
// SET_ROWS that put this step's rows into it).
Tensor* pool_view(Context& c, Tensor* written, const HParams& hp) {
  const size_t elt = type_info(written->type).type_size;
  return view(c, written, {hp.head_dim, hp.n_head_kv, written->ne[1]}, {hp.head_dim * elt, written->nb[1]}, 0);
}

// x (n, t) -> rms_norm(x) * w, with w (n,) broadcast over rows.
Tensor* norm(Context& c, Tensor* x, Tensor* w, float eps) { return mul(c, rms_norm(c, x, eps), w); }

Tensor* linear(Context& c, Tensor* w, Tensor* b, Tensor* x) {
  Tensor* y = mul_mat(c, w, x);  // W (k, n) @ x (k, t) -> y (n, t)
  return b ? add(c, y, b) : y;
}

}  // namespace

size_t Batch::add(std::span<const int32_t> seq_slots, std::span<const int32_t> new_tokens, int n_past,
                  Logits logits) {
  const size_t n = new_tokens.size();
  if (seq_slots.size() != size_t(n_past) + n)
    throw Error("batch: " + std::to_string(seq_slots.size()) + " slots listed for " + std::to_string(n_past) +
                " cached + " + std::to_string(n) + " new positions");
  const size_t first_row = out_rows.size();
  const int32_t offset = int32_t(lists.size());
  lists.insert(lists.end(), seq_slots.begin(), seq_slots.end());
  for (size_t i = 0; i < n; i++) {
    const int32_t p = n_past + int32_t(i);
    if (logits == Logits::ALL || (logits == Logits::LAST && i + 1 == n)) out_rows.push_back(int32_t(tokens.size()));
    tokens.push_back(new_tokens[i]);
    pos.push_back(p);
    slots.push_back(seq_slots[size_t(p)]);
    ranges.push_back(offset);
    ranges.push_back(p + 1);  // causal: positions 0..p
  }
  return first_row;
}

void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache, const Batch& b) {
  const HParams& hp = m.hp;
  Context& c = fg.ctx;
  const int64_t n = int64_t(b.size());
  const int64_t hd = hp.head_dim;
  if (n == 0) throw Error("forward: the batch has no tokens");

  fg.tokens = b.tokens;
  fg.pos = b.pos;
  fg.slots = b.slots;
  fg.out_rows = b.out_rows;
  // PAGED_ATTN's index: the (offset, count) pairs, offsets made absolute, then the lists.
  fg.index = b.ranges;
  for (int64_t i = 0; i < n; i++) fg.index[size_t(2 * i)] += int32_t(2 * n);
  fg.index.insert(fg.index.end(), b.lists.begin(), b.lists.end());

  Tensor* inp_tokens = input(c, Type::I32, n, fg.tokens.data(), "inp_tokens");
  Tensor* inp_pos = input(c, Type::I32, n, fg.pos.data(), "inp_pos");
  Tensor* inp_slots = input(c, Type::I64, n, fg.slots.data(), "inp_slots");
  Tensor* inp_index = input(c, Type::I32, int64_t(fg.index.size()), fg.index.data(), "inp_kv_index");

  const float attn_scale = 1.0f / std::sqrt(float(hd));
  Tensor* x = get_rows(c, m.tok_embd, inp_tokens);  // (n_embd, n)
  Tensor *kc = nullptr, *vc = nullptr;

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

    // Write K, V into their slots, then each token attends over its sequence's slots.
    kc = set_rows(c, cache.k(il), reshape(c, k, {hp.n_embd_kv(), n}), inp_slots);
    vc = set_rows(c, cache.v(il), v, inp_slots);
    Tensor* attn = paged_attn(c, q, pool_view(c, kc, hp), pool_view(c, vc, hp), inp_index, attn_scale);
    x = add(c, x, mul_mat(c, L.wo, reshape(c, attn, {hp.n_embd_q(), n})));  // attn (hd, n_head, n)

    // ---- feed-forward (SwiGLU) ----
    h = norm(c, x, L.ffn_norm, hp.rms_eps);
    Tensor* ff = glu(c, mul_mat(c, L.ffn_gate, h), mul_mat(c, L.ffn_up, h), Glu::SWIGLU);
    x = add(c, x, mul_mat(c, L.ffn_down, ff));
  }

  if (fg.out_rows.empty()) {  // a prefill chunk that is not a prompt's last: only the K/V matter
    fg.logits = nullptr;
    fg.graph = build_graph({kc, vc});
    return;
  }
  const int64_t n_out = int64_t(fg.out_rows.size());
  const bool all_rows = n_out == n && std::is_sorted(fg.out_rows.begin(), fg.out_rows.end());
  if (!all_rows) x = get_rows(c, x, input(c, Type::I32, n_out, fg.out_rows.data(), "inp_out_rows"));
  x = norm(c, x, m.output_norm, hp.rms_eps);
  fg.logits = mul_mat(c, m.output, x);  // (n_vocab, n_out)
  fg.logits->set_name("logits");
  fg.graph = build_graph({fg.logits});
}

void build_forward(ForwardGraph& fg, const Model& m, const KvCache& cache, std::span<const int32_t> tokens,
                   int n_past, bool all_logits) {
  std::vector<int32_t> seq_slots(size_t(n_past) + tokens.size());
  std::iota(seq_slots.begin(), seq_slots.end(), 0);
  Batch b;
  b.add(seq_slots, tokens, n_past, all_logits ? Logits::ALL : Logits::LAST);
  build_forward(fg, m, cache, b);
}

}  // namespace hart
