#include "model/delta_net.h"

#include <cmath>

#include "common/error.h"

namespace hart {
namespace {

int64_t key_dim(const HParams& hp) { return int64_t(hp.ssm_d_state) * hp.ssm_n_k_heads; }
int64_t value_dim(const HParams& hp) { return int64_t(hp.ssm_d_state) * hp.ssm_n_v_heads; }
int64_t conv_dim(const HParams& hp) { return 2 * key_dim(hp) + value_dim(hp); }

// llama.cpp's build_gdn_l2_norm: x / sqrt(sum x^2 + eps), written as a scaled RMS norm.
Tensor* l2_normed(Forward& f, Tensor* x) {
  const float n = float(x->ne[0]);
  return scale(f.c, rms_norm(f.c, x, f.hp.rms_eps / n), 1.0f / std::sqrt(n));
}

}  // namespace

void read_delta_net(const KeyReader& k, HParams& hp) {
  const std::string a = hp.arch_name + ".";
  hp.ssm_d_conv = k.req_int("ssm.conv_kernel");
  hp.ssm_d_state = k.req_int("ssm.state_size");
  hp.ssm_n_k_heads = k.req_int("ssm.group_count");
  hp.ssm_n_v_heads = k.req_int("ssm.time_step_rank");
  const int d_inner = k.req_int("ssm.inner_size");
  if (d_inner != hp.ssm_d_state * hp.ssm_n_v_heads)
    throw Error(a + "ssm.inner_size " + std::to_string(d_inner) + " is not state_size x time_step_rank (" +
                std::to_string(hp.ssm_d_state) + " x " + std::to_string(hp.ssm_n_v_heads) + ")");
  if (hp.ssm_n_v_heads % hp.ssm_n_k_heads != 0)
    throw Error(a + "ssm.time_step_rank " + std::to_string(hp.ssm_n_v_heads) + " is not a multiple of group_count " +
                std::to_string(hp.ssm_n_k_heads));
  if (hp.ssm_d_conv < 2) throw Error(a + "ssm.conv_kernel must be at least 2");
  std::vector<int64_t> recurrent(size_t(hp.n_layer), 0);
  if (auto r = k.per_layer("attention.recurrent_layers", hp.n_layer)) {
    recurrent = *r;
  } else {
    const int64_t every = k.opt_int("full_attention_interval").value_or(4);
    if (every < 1) throw Error(a + "full_attention_interval must be positive");
    for (int il = 0; il < hp.n_layer; il++) recurrent[size_t(il)] = (il + 1) % every != 0;
  }
  const int64_t S = hp.ssm_d_state;
  for (int il = 0; il < hp.n_layer; il++) {
    if (!recurrent[size_t(il)]) continue;
    LayerConfig& l = hp.layers[size_t(il)];
    l.attn = AttnKind::NONE;
    l.recurrent = RecurrentKind::DELTA_NET;
    l.state = {(hp.ssm_d_conv - 1) * conv_dim(hp), S * S * hp.ssm_n_v_heads};
  }
}

void delta_net_tensors(TensorList& list, const HParams& hp, int il, DeltaNet& d) {
  const int64_t e = hp.n_embd, hv = hp.ssm_n_v_heads;
  list.linear(blk(il, "attn_qkv"), e, conv_dim(hp), d.qkv);
  list.linear(blk(il, "attn_gate"), e, value_dim(hp), d.gate);
  list.add(blk(il, "ssm_conv1d.weight"), {hp.ssm_d_conv, conv_dim(hp)}, TensorRole::CONV, &d.conv);
  list.add(blk(il, "ssm_dt.bias"), {hv}, TensorRole::BIAS, &d.dt_bias);
  list.add(blk(il, "ssm_a"), {hv}, TensorRole::BIAS, &d.a);
  list.linear(blk(il, "ssm_beta"), e, hv, d.beta);
  list.linear(blk(il, "ssm_alpha"), e, hv, d.alpha);
  list.add(blk(il, "ssm_norm.weight"), {hp.ssm_d_state}, TensorRole::NORM, &d.norm);
  list.linear(blk(il, "ssm_out"), value_dim(hp), e, d.out);
}

Tensor* delta_net(Forward& f, int il, Tensor* h) {
  const DeltaNet& D = f.w.layers[size_t(il)].delta_net;
  const HParams& hp = f.hp;
  const int64_t S = hp.ssm_d_state, Hk = hp.ssm_n_k_heads, Hv = hp.ssm_n_v_heads, n = h->ne[1];
  const int64_t kd = key_dim(hp), vd = value_dim(hp), cd = conv_dim(hp);
  Tensor* mixed = linear(f, D.qkv, h);                                    // (q | k | v, n)
  Tensor* z = linear(f, D.gate, h);                                       // (vd, n): the output gate
  Tensor* beta = unary(f.c, linear(f, D.beta, h), Unary::SIGMOID);        // (Hv, n)
  Tensor* g = mul(f.c, unary(f.c, add(f.c, linear(f, D.alpha, h), D.dt_bias), Unary::SOFTPLUS), D.a);  // log-decay
  const size_t col = mixed->nb[1], e = sizeof(float);
  std::vector<Tensor*> outs;
  for (const SeqRun& r : f.seq_runs()) {
    const int64_t tokens = r.n_tok * r.n_seq;
    Tensor* x = view(f.c, mixed, {cd, r.n_tok, r.n_seq}, {col, col * size_t(r.n_tok)}, size_t(r.first) * col);
    Tensor* conv = reshape(f.c, unary(f.c, causal_conv(f, il, 0, r, x, D.conv), Unary::SILU), {cd, tokens});
    auto heads = [&](int64_t at, int64_t count) {  // (S, count, tokens) of each token's conv row
      return view(f.c, conv, {S, count, tokens}, {size_t(S) * e, conv->nb[1]}, size_t(at) * e);
    };
    auto cols = [&](Tensor* t) {  // (Hv, tokens): the run's columns
      return view(f.c, t, {Hv, tokens}, {t->nb[1]}, size_t(r.first) * t->nb[1]);
    };
    // The state (S*S*Hv floats per sequence, a MiB at 0.8B) is read from the store's cells by the
    // op itself, not copied out first.
    Tensor* out = gated_delta_net(f.c, l2_normed(f, heads(0, Hk)), l2_normed(f, heads(kd, Hk)), heads(2 * kd, Hv),
                                  cols(g), cols(beta), f.store.state(il, 1), r.read);
    outs.push_back(view(f.c, out, {vd, tokens}, {out->nb[1]}, 0));
    state_write(f, il, 1, r, view(f.c, out, {S * vd, r.n_seq}, {size_t(S * vd) * e}, size_t(tokens) * out->nb[1]),
                out);
  }
  Tensor* y = reshape(f.c, join_runs(f, outs), {S, Hv, n});  // per value head
  y = mul(f.c, norm(f, y, D.norm), unary(f.c, reshape(f.c, z, {S, Hv, n}), Unary::SILU));
  return linear(f, D.out, reshape(f.c, y, {vd, n}));
}

}  // namespace hart
