#include "model/rwkv.h"

#include "common/error.h"
#include "model/tensor_list.h"

namespace hart {
namespace {

constexpr float kDecayScale = -0.606531f;  // w = exp(-0.606531 * sigmoid(...)): decay in (0.545, 1)
constexpr float kGroupNormEps = 64e-5f;    // llama.cpp's eps for the per-head norm of the WKV output

Tensor* sigmoid(Forward& f, Tensor* x) { return unary(f.c, x, Unary::SIGMOID); }

// W2 (W1 x): the low-rank projections.
Tensor* lora(Forward& f, Tensor* w1, Tensor* w2, Tensor* x) { return mul_mat(f.c, w2, mul_mat(f.c, w1, x)); }

// Columns [first, first + n) of x (d, n) ... as (d0, d1, n): a contiguous slice of a run.
Tensor* run_slice(Forward& f, Tensor* x, const SeqRun& r) {
  const int64_t n = r.n_tok * r.n_seq;
  return view(f.c, x, {x->ne[0], x->ne[1], n}, {x->nb[1], x->nb[2]}, size_t(r.first) * x->nb[2]);
}

}  // namespace

Tensor* layer_norm(Forward& f, Tensor* x, Tensor* w, Tensor* b) {
  Tensor* y = norm(f.c, x, f.hp.norm_eps);
  if (w) y = mul(f.c, y, w);
  return b ? add(f.c, y, b) : y;
}

Tensor* token_shift(Forward& f, int il, int part, Tensor* x) {
  const int64_t d = x->ne[0];
  const size_t col = x->nb[1];
  std::vector<Tensor*> outs;
  for (const SeqRun& r : f.seq_runs()) {
    Tensor* past = state_read(f, il, part, r);  // (d, n_seq)
    auto tokens = [&](int64_t from, int64_t n) {  // (d, n, n_seq): tokens [from, from + n) of each
      return view(f.c, x, {d, n, r.n_seq}, {col, col * size_t(r.n_tok)}, (size_t(r.first) + size_t(from)) * col);
    };
    Tensor* prev = reshape(f.c, past, {d, 1, r.n_seq});
    if (r.n_tok > 1) prev = concat(f.c, prev, tokens(0, r.n_tok - 1), 1);
    state_write(f, il, part, r, tokens(r.n_tok - 1, 1), past);
    outs.push_back(reshape(f.c, prev, {d, r.n_tok * r.n_seq}));
  }
  return join_runs(f, outs);
}

Tensor* rwkv7_time_mix(Forward& f, int il, Tensor* x, Tensor* x_prev, Tensor*& v_first, int wkv_part) {
  const RwkvTimeMix& t = f.w.layers[size_t(il)].time_mix;
  const int64_t d = f.hp.n_embd, S = f.hp.wkv_head_size, H = d / S, n = x->ne[1];
  // The shifted inputs of r, w, k, v, a (, g): x + (x_prev - x) * lerp_i.
  Tensor* sx = sub(f.c, x_prev, x);
  auto mixed = [&](int i) {
    return add(f.c, mul(f.c, sx, view(f.c, t.lerp_fused, {d}, {}, size_t(i) * size_t(d) * sizeof(float))), x);
  };
  Tensor* xv = mixed(3);
  Tensor* r = mm(f, t.receptance, mixed(0));
  Tensor* w = add(f.c, mul_mat(f.c, t.w2, unary(f.c, mul_mat(f.c, t.w1, mixed(1)), Unary::TANH)), t.w0);
  w = unary(f.c, scale(f.c, sigmoid(f, w), kDecayScale), Unary::EXP);  // per-channel decay
  Tensor* k = mm(f, t.key, mixed(2));
  Tensor* v = mm(f, t.value, xv);
  if (!v_first) {
    v_first = v;
  } else {  // the value residual: towards layer 0's value, by a learned gate
    Tensor* mix = sigmoid(f, add(f.c, lora(f, t.v1, t.v2, xv), t.v0));
    v = add(f.c, v, mul(f.c, sub(f.c, v_first, v), mix));
  }
  Tensor* a = sigmoid(f, add(f.c, lora(f, t.a1, t.a2, mixed(4)), t.a0));  // in-context learning rate
  Tensor* g = t.g1 ? mul_mat(f.c, t.g2, sigmoid(f, mul_mat(f.c, t.g1, mixed(5)))) : nullptr;
  Tensor* kk = l2_norm(f.c, reshape(f.c, mul(f.c, k, t.k_k), {S, H, n}), 1e-12f);
  Tensor* ka = mul(f.c, k, t.k_a);
  k = add(f.c, k, sub(f.c, mul(f.c, a, ka), ka));
  auto heads = [&](Tensor* y) { return reshape(f.c, y, {S, H, n}); };
  r = heads(r), w = heads(w), k = heads(k), v = heads(v), a = heads(a);
  Tensor* neg_kk = unary(f.c, kk, Unary::NEG);
  Tensor* kk_a = mul(f.c, kk, a);

  // The WKV recurrence, per run of sequences, from the store's cells (read by the op itself: the
  // state is a MiB per layer at 1.5B) and back into it.
  std::vector<Tensor*> outs;
  for (const SeqRun& run : f.seq_runs()) {
    const int64_t tokens = run.n_tok * run.n_seq;
    Tensor* out = rwkv_wkv7(f.c, run_slice(f, r, run), run_slice(f, w, run), run_slice(f, k, run), run_slice(f, v, run),
                            run_slice(f, neg_kk, run), run_slice(f, kk_a, run), f.store.state(il, wkv_part), run.read);
    outs.push_back(view(f.c, out, {d, tokens}, {out->nb[1]}, 0));
    state_write(f, il, wkv_part, run,
                view(f.c, out, {S * d, run.n_seq}, {size_t(S * d) * sizeof(float)}, size_t(tokens) * out->nb[1]), out);
  }
  Tensor* y = join_runs(f, outs);  // (n_embd, n)
  if (t.ln) {  // a norm per head, then the weights
    y = reshape(f.c, norm(f.c, reshape(f.c, y, {S, H, n}), kGroupNormEps), {d, n});
    y = add(f.c, mul(f.c, y, t.ln), t.ln_b);
  }
  // The bonus term: v * sum over each head of k * r * r_k.
  Tensor* rk = sum_rows(f.c, mul(f.c, mul(f.c, k, r), reshape(f.c, t.r_k, {S, H})));  // (1, H, n)
  y = add(f.c, y, reshape(f.c, mul(f.c, v, rk), {d, n}));
  if (g) y = mul(f.c, y, g);
  return mm(f, t.output, y);
}

Tensor* rwkv7_channel_mix(Forward& f, int il, Tensor* x, Tensor* x_prev) {
  const RwkvChannelMix& c = f.w.layers[size_t(il)].channel_mix;
  Tensor* xk = add(f.c, mul(f.c, sub(f.c, x_prev, x), c.lerp_k), x);
  Tensor* k = unary(f.c, mm(f, c.key, xk), Unary::RELU);
  return mm(f, c.value, mul(f.c, k, k));
}

void read_rwkv7(const KeyReader& k, HParams& hp, int shifts) {
  hp.norm_eps = k.opt_float("attention.layer_norm_epsilon").value_or(hp.norm_eps);
  hp.rms_eps = k.opt_float("attention.layer_norm_rms_epsilon").value_or(hp.rms_eps);
  hp.wkv_head_size = k.req_int("wkv.head_size");
  hp.lora_decay = k.req_int("attention.decay_lora_rank");
  hp.lora_iclr = k.req_int("attention.iclr_lora_rank");
  hp.lora_value = k.req_int("attention.value_residual_mix_lora_rank");
  hp.lora_gate = int(k.opt_int("attention.gate_lora_rank").value_or(0));
  if (hp.n_embd % hp.wkv_head_size != 0)
    throw Error(hp.arch_name + ".wkv.head_size " + std::to_string(hp.wkv_head_size) + " does not divide " +
                std::to_string(hp.n_embd));
  const int64_t d = hp.n_embd;
  for (LayerConfig& l : hp.layers) {
    l.attn = AttnKind::NONE;
    l.recurrent = RecurrentKind::RWKV7;
    l.state.assign(size_t(shifts), d);                 // token-shift rows
    l.state.push_back(int64_t(hp.wkv_head_size) * d);  // the WKV state: S x S per head
  }
}

void rwkv7_time_mix_tensors(TensorList& list, const HParams& hp, int il, RwkvTimeMix& t, TensorNeed ln_need) {
  const int64_t d = hp.n_embd;
  const bool gated = hp.lora_gate > 0;
  const auto vector = [&](const char* name, Tensor** bind) { list.add(blk(il, name), {d}, TensorRole::BIAS, bind); };
  const auto matrix = [&](const char* name, int64_t k, int64_t n, Tensor** bind) {
    list.add(blk(il, name), {k, n}, TensorRole::MATRIX, bind);
  };
  list.add(blk(il, "time_mix_lerp_fused.weight"), {d, 1, 1, gated ? 6 : 5}, TensorRole::BIAS, &t.lerp_fused);
  vector("time_mix_w0.weight", &t.w0);
  matrix("time_mix_w1.weight", d, hp.lora_decay, &t.w1);
  matrix("time_mix_w2.weight", hp.lora_decay, d, &t.w2);
  vector("time_mix_a0.weight", &t.a0);
  matrix("time_mix_a1.weight", d, hp.lora_iclr, &t.a1);
  matrix("time_mix_a2.weight", hp.lora_iclr, d, &t.a2);
  // Layer 0 has the value-residual tensors too (of the iclr rank), which llama.cpp never uses.
  const int64_t value_rank = il == 0 ? hp.lora_iclr : hp.lora_value;
  if (il == 0) {
    list.ignore(blk(il, "time_mix_v0.weight"), {d}, TensorRole::BIAS, true);
    list.ignore(blk(il, "time_mix_v1.weight"), {d, value_rank}, TensorRole::MATRIX, true);
    list.ignore(blk(il, "time_mix_v2.weight"), {value_rank, d}, TensorRole::MATRIX, true);
  } else {
    vector("time_mix_v0.weight", &t.v0);
    matrix("time_mix_v1.weight", d, value_rank, &t.v1);
    matrix("time_mix_v2.weight", value_rank, d, &t.v2);
  }
  if (gated) {
    matrix("time_mix_g1.weight", d, hp.lora_gate, &t.g1);
    matrix("time_mix_g2.weight", hp.lora_gate, d, &t.g2);
  }
  vector("time_mix_k_k.weight", &t.k_k);
  vector("time_mix_k_a.weight", &t.k_a);
  vector("time_mix_r_k.weight", &t.r_k);
  matrix("time_mix_key.weight", d, d, &t.key);
  matrix("time_mix_value.weight", d, d, &t.value);
  matrix("time_mix_receptance.weight", d, d, &t.receptance);
  matrix("time_mix_output.weight", d, d, &t.output);
  list.add(blk(il, "time_mix_ln.weight"), {d}, TensorRole::NORM, &t.ln, ln_need);
  list.add(blk(il, "time_mix_ln.bias"), {d}, TensorRole::BIAS, &t.ln_b, ln_need);
}

}  // namespace hart
