#include "testing/ggml_cases.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>

#include "common/error.h"

namespace hart::testing {

namespace {

using Ne = std::array<int64_t, kMaxDims>;

// A case's parameter string: "key=value" items split at the commas outside brackets; a bare
// word ("split") counts as a key with an empty value. Accessors throw hart::Error on a missing
// or malformed value.
class Params {
 public:
  explicit Params(const std::string& s) {
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= s.size(); i++) {
      if (i < s.size() && s[i] == '[') depth++;
      if (i < s.size() && s[i] == ']') depth--;
      if (i == s.size() || (s[i] == ',' && depth == 0)) {
        const std::string item = s.substr(start, i - start);
        const size_t eq = item.find('=');
        if (!item.empty()) kv_[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
        start = i + 1;
      }
    }
  }

  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  int64_t i(const std::string& key) const { return std::stoll(get(key)); }
  bool flag(const std::string& key) const { return has(key) && i(key) != 0; }
  float f(const std::string& key) const { return std::stof(get(key)); }
  Type type(const std::string& key) const {
    const std::string& name = get(key);
    const std::optional<Type> t = type_from_name(name);
    if (!t) throw Error("type " + name + " is not one hart has");
    return *t;
  }
  template <size_t N>
  std::array<int64_t, N> list(const std::string& key) const {
    const std::string& v = get(key);
    const Error bad(key + "=" + v + " is not a list of " + std::to_string(N));
    if (v.size() < 2 || v.front() != '[' || v.back() != ']') throw bad;
    std::array<int64_t, N> out{};
    size_t n = 0, at = 1;
    while (at < v.size() - 1 && n < N) {
      size_t used = 0;
      out[n++] = std::stoll(v.substr(at), &used);
      at += used + 1;
    }
    if (n != N || at != v.size()) throw bad;
    return out;
  }

 private:
  const std::string& get(const std::string& key) const {
    const auto it = kv_.find(key);
    if (it == kv_.end()) throw Error("parameter " + key + " is missing");
    return it->second;
  }
  std::map<std::string, std::string> kv_;
};

Tensor* leaf(RandomLeaves& l, Type t, const Ne& ne, float lo = -1.0f, float hi = 1.0f) {
  return l.random(t, std::span<const int64_t>(ne), lo, hi);
}

// The first ne elements of each dim of a, with a's strides, at byte offset `offset`.
Tensor* sub_view(RandomLeaves& l, Tensor* a, const Ne& ne, size_t offset = 0) {
  return view(l.ctx, a, {ne[0], ne[1], ne[2], ne[3]}, {a->nb[1], a->nb[2], a->nb[3]}, offset);
}

Ne scaled(Ne ne, const Ne& by) {
  for (int d = 0; d < kMaxDims; d++) ne[d] *= by[d];
  return ne;
}

// Index leaf of type I32 or I64 (contiguous); fill(i) gives element i.
template <typename Fill>
Tensor* index_leaf(RandomLeaves& l, Type t, const Ne& ne, Fill fill) {
  Tensor* x = leaf(l, t, ne, 0.0f, 1.0f);
  for (int64_t i = 0; i < x->nelements(); i++) {
    if (t == Type::I64) static_cast<int64_t*>(x->data)[i] = fill(i);
    else static_cast<int32_t*>(x->data)[i] = int32_t(fill(i));
  }
  return x;
}

// Rows of ne[0] distinct values drawn from 0..n-1 (a shuffle's first ne[0]; ne[0] <= n).
Tensor* distinct_ids(RandomLeaves& l, Type t, const Ne& ne, int64_t n) {
  std::vector<int64_t> all(static_cast<size_t>(ne[1] * ne[2] * ne[3] * ne[0]));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t r = 0; r < ne[1] * ne[2] * ne[3]; r++) {
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), l.rng());
    for (int64_t i = 0; i < ne[0]; i++) all[size_t(r * ne[0] + i)] = perm[size_t(i % n)];
  }
  return index_leaf(l, t, ne, [&](int64_t i) { return all[size_t(i)]; });
}

Tensor* permuted(RandomLeaves& l, Tensor* a, const Ne& axes) {
  return permute(l.ctx, a, int(axes[0]), int(axes[1]), int(axes[2]), int(axes[3]));
}

[[noreturn]] void refuse(const std::string& why) { throw Error(why); }

// ---- the cases, one builder per test-backend-ops test (tests/test-backend-ops.cpp) ----------

using Builder = std::function<Tensor*(RandomLeaves&, const Params&)>;

// test_unary: a [ne_a] in [-150, 150], v=1 a view of a larger tensor; test_sqr, test_floor, ...
// (ne= instead of ne_a=): a [ne] in [-range, range].
Builder unary_case(Unary u, float range) {
  return [u, range](RandomLeaves& l, const Params& p) {
    if (p.has("ne")) return unary(l.ctx, leaf(l, p.type("type"), p.list<4>("ne"), -range, range), u);
    const Ne ne = p.list<4>("ne_a");
    Tensor* a = p.flag("v") ? sub_view(l, leaf(l, p.type("type"), scaled(ne, {3, 2, 5, 4}), -150, 150), ne)
                            : leaf(l, p.type("type"), ne, -150, 150);
    return unary(l.ctx, a, u);
  };
}

// test_glu: ggml_glu(a, swapped) halves a's rows into gate and up (swapped: up first);
// test_glu_split ("split"): gate a and up b of equal shapes.
Builder glu_case(Glu g) {
  return [g](RandomLeaves& l, const Params& p) {
    const Ne ne = p.list<4>("ne_a");
    const Type t = p.type("type");
    auto operand = [&] {
      return p.flag("v") ? sub_view(l, leaf(l, t, scaled(ne, {3, 1, 1, 1}), -150, 150), ne) : leaf(l, t, ne, -150, 150);
    };
    if (p.has("split")) {
      Tensor* a = operand();
      return glu(l.ctx, a, operand(), g);
    }
    if (ne[0] % 2 != 0) refuse("GLU of an odd row");
    Tensor* a = operand();
    const size_t half = size_t(ne[0] / 2) * type_info(t).type_size;
    const Ne h = {ne[0] / 2, ne[1], ne[2], ne[3]};
    Tensor* first = sub_view(l, a, h, 0);
    Tensor* second = sub_view(l, a, h, half);
    return p.flag("swapped") ? glu(l.ctx, second, first, g) : glu(l.ctx, first, second, g);
  };
}

// test_get_rows: in [n, m, be1, be2], rows I32 [r, be1, be2] in 0..m-1 (v: every other of r+1).
Tensor* get_rows_case(RandomLeaves& l, const Params& p) {
  const int64_t n = p.i("n"), m = p.i("m"), r = p.i("r"), be1 = p.i("be1"), be2 = p.i("be2");
  if (p.flag("vs0")) refuse("GET_ROWS from a view");
  Tensor* in = leaf(l, p.type("type"), {n, m, be1, be2});
  const bool v = p.flag("v");
  std::uniform_int_distribution<int64_t> row(0, m - 1);
  Tensor* rows = index_leaf(l, Type::I32, {v ? r + 1 : r, be1, be2, 1}, [&](int64_t) { return row(l.rng()); });
  if (v) rows = view(l.ctx, rows, {r / 2, be1, be2}, {rows->nb[1], rows->nb[2]}, rows->nb[0]);
  return get_rows(l.ctx, in, rows);
}

// test_set_rows: dst [ne0, ne1, ne2*nr0, ne3*nr1] of `type`, src F32 [ne0, r, ...], ids [r, ne2,
// ne3] distinct rows of dst (v: the first r/2 of src and ids).
Tensor* set_rows_case(RandomLeaves& l, const Params& p) {
  const Ne ne = p.list<4>("ne");
  const auto nr = p.list<2>("nr23");
  const int64_t r = p.i("r");
  const Type dst_type = p.has("type_dst") ? p.type("type_dst") : p.type("type");
  const Type src_type = p.has("type_src") ? p.type("type_src") : Type::F32;
  Tensor* dst = leaf(l, dst_type, {ne[0], ne[1], ne[2] * nr[0], ne[3] * nr[1]});
  Tensor* src = leaf(l, src_type, {ne[0], r, ne[2] * nr[0], ne[3] * nr[1]});
  Tensor* ids = distinct_ids(l, p.type("type_idx"), {r, ne[2], ne[3], 1}, ne[1]);
  if (p.flag("v")) {
    src = sub_view(l, src, {ne[0], r / 2, ne[2] * nr[0], ne[3] * nr[1]});
    ids = view(l.ctx, ids, {r / 2, ne[2], ne[3]}, {ids->nb[1], ids->nb[2]}, 0);
  }
  return set_rows(l.ctx, dst, src, ids);
}

bool any(const Ne& axes) { return axes[0] + axes[1] + axes[2] + axes[3] > 0; }

// test_cpy: src [ne] in [-150, 150] (permuted, transposed) copied into a new dst of its shape
// (permuted).
Tensor* cpy_case(RandomLeaves& l, const Params& p) {
  if (p.has("ne_dst") || p.has("dst_alloc")) refuse("CPY into a reshaped or strided dst");
  const Ne ps = p.list<4>("permute_src"), pd = p.list<4>("permute_dst");
  Tensor* src = leaf(l, p.type("type_src"), p.has("ne") ? p.list<4>("ne") : p.list<4>("ne_src"), -150, 150);
  if (any(ps)) src = permuted(l, src, ps);
  if (p.flag("_src_transpose")) src = transpose(l.ctx, src);
  Tensor* dst = leaf(l, p.type("type_dst"), {src->ne[0], src->ne[1], src->ne[2], src->ne[3]});
  if (any(pd)) dst = permuted(l, dst, pd);
  return cpy(l.ctx, src, dst);
}

// test_cont: a transposed src, or (use_view_slice) a one-row slice of it, made contiguous.
Tensor* cont_case(RandomLeaves& l, const Params& p) {
  const Ne ne = p.list<4>("ne");
  Tensor* src = leaf(l, p.type("type"), ne);
  if (p.has("permute") && any(p.list<4>("permute"))) return cont(l.ctx, permuted(l, src, p.list<4>("permute")));
  if (p.flag("use_view_slice"))
    return cont(l.ctx, sub_view(l, src, {ne[0], 1, ne[2], ne[3]}, src->nb[0] * size_t(ne[1] - 1)));
  return cont(l.ctx, transpose(l.ctx, src));
}

// test_bin_bcast: a [ne * nr] op b [ne] (perm1: b a permuted tensor; src_overlap: a and b
// overlapping views of a), nf ops chained.
Builder binary_case(Tensor* (*op)(Context&, Tensor*, Tensor*), bool near_one) {
  return [op, near_one](RandomLeaves& l, const Params& p) {
    const Ne ne = p.list<4>("ne");
    const Ne nr = p.list<4>("nr");
    const Type t = p.type("type");
    const float lo = near_one ? 0.9f : -1.0f, hi = near_one ? 1.1f : 1.0f;
    Tensor* a = leaf(l, t, scaled(ne, nr), lo, hi);
    const bool overlap = p.flag("src_overlap");
    const Ne half = {ne[0], ne[1], ne[2], 2 * (ne[3] / 3)};
    Tensor* out = overlap ? sub_view(l, a, half) : a;
    for (int64_t i = 0; i < p.i("nf"); i++) {
      Tensor* b = p.flag("perm1") ? permute(l.ctx, leaf(l, t, {ne[1], ne[2], ne[0], ne[3]}, lo, hi), 1, 2, 0, 3)
                  : overlap       ? sub_view(l, a, half, size_t(ne[3] / 3) * a->nb[3])
                                  : leaf(l, t, ne, lo, hi);
      out = op(l.ctx, out, b);
    }
    return out;
  };
}

Tensor* scale_case(RandomLeaves& l, const Params& p) {
  return scale(l.ctx, leaf(l, p.type("type"), p.list<4>("ne")), p.f("scale"), p.f("bias"));
}

// test_norm, test_rms_norm, test_l2_norm: v halves every dim of a (a view with a's strides).
Builder norm_case(Tensor* (*fn)(Context&, Tensor*, float), float range) {
  return [fn, range](RandomLeaves& l, const Params& p) {
    if (p.flag("noncontig_rows")) refuse("a norm over permuted rows");
    const Ne ne = p.list<4>("ne");
    Tensor* a = leaf(l, p.type("type"), ne, -range, range);
    if (p.flag("v")) a = sub_view(l, a, {ne[0] / 2, ne[1] / 2, ne[2] / 2, ne[3] / 2});
    return fn(l.ctx, a, p.f("eps"));
  };
}

// test_soft_max: a [ne0, ne1, ne2*nr0, ne3*nr1], mask [ne] of m_prec broadcast over it, sinks
// [ne2*nr0].
Tensor* soft_max_case(RandomLeaves& l, const Params& p) {
  const Ne ne = p.list<4>("ne");
  const auto nr = p.list<2>("nr23");
  Tensor* a = leaf(l, p.type("type"), {ne[0], ne[1], ne[2] * nr[0], ne[3] * nr[1]});
  Tensor* mask = p.flag("mask") ? leaf(l, p.type("m_prec"), ne) : nullptr;
  Tensor* sinks = p.flag("sinks") ? leaf(l, Type::F32, {ne[2] * nr[0], 1, 1, 1}) : nullptr;
  return soft_max(l.ctx, a, mask, p.f("scale"), p.f("max_bias"), sinks);
}

// test_rope: a [ne_a] (v=1 a view of a larger tensor, v=2 the second half of rows twice as
// long), positions in 0..n_ctx-1, freq factors in [0.9, 1.1], base 10000, YaRN's ext_factor ef.
Tensor* rope_case(RandomLeaves& l, const Params& p) {
  if (p.has("n_offs") && p.i("n_offs") != 0) refuse("ROPE of an offset window");
  const Ne ne = p.list<4>("ne_a");
  const Type t = p.type("type");
  const int64_t v = p.i("v");
  const int n_dims = int(p.i("n_dims"));
  Tensor* a = v == 1   ? sub_view(l, leaf(l, t, scaled(ne, {2, 4, 3, 1})), ne)
              : v == 2 ? sub_view(l, leaf(l, t, scaled(ne, {2, 1, 1, 1})), ne, size_t(ne[0]) * type_info(t).type_size)
                       : leaf(l, t, ne);
  std::uniform_int_distribution<int64_t> at(0, p.i("n_ctx") - 1);
  Tensor* pos = index_leaf(l, Type::I32, {ne[2], 1, 1, 1}, [&](int64_t) { return at(l.rng()); });
  Tensor* ff = p.flag("ff") ? leaf(l, Type::F32, {n_dims / 2, 1, 1, 1}, 0.9f, 1.1f) : nullptr;
  // test-backend-ops' YaRN: n_ctx_orig 0, beta_fast = beta_slow = 1
  return rope(l.ctx, a, pos, ff, RopeMode(p.i("mode")), n_dims, 10000.0f, p.f("fs"), p.f("af"), {p.f("ef"), 0, 1.0f, 1.0f});
}

// test_concat: v bit 0 / 2: a a view of a larger tensor (first 3 / last 2 dims), bits 1 / 3: b.
Tensor* concat_case(RandomLeaves& l, const Params& p) {
  const Ne ne_a = p.list<4>("ne_a");
  const int dim = int(p.i("dim"));
  const int64_t v = p.i("v");
  const Type t = p.type("type");
  Ne ne_b = ne_a;
  ne_b[size_t(dim)] = p.i("ne_b_d");
  Tensor* a = v & 1   ? sub_view(l, leaf(l, t, scaled(ne_a, {2, 4, 3, 1})), ne_a)
              : v & 4 ? sub_view(l, leaf(l, t, scaled(ne_a, {1, 1, 2, 4})), ne_a)
                      : leaf(l, t, ne_a);
  Tensor* b = v & 2   ? sub_view(l, leaf(l, t, scaled(ne_b, {3, 2, 4, 1})), ne_b)
              : v & 8 ? sub_view(l, leaf(l, t, scaled(ne_b, {1, 1, 3, 2})), ne_b)
                      : leaf(l, t, ne_b);
  return concat(l.ctx, a, b, dim);
}

Tensor* ssm_conv_case(RandomLeaves& l, const Params& p) {
  const Type t = p.type("type");
  return ssm_conv(l.ctx, leaf(l, t, p.list<4>("ne_a")), leaf(l, t, p.list<4>("ne_b")));
}

// test_rwkv_wkv7: r, w, k, v, a, b [S, H, T] with a and b L2-normalized, state [S*S*H, n_seqs].
Tensor* rwkv_wkv7_case(RandomLeaves& l, const Params& p) {
  const Type t = p.type("type");
  const int64_t S = p.i("head_size"), H = p.i("head_count"), n_s = p.i("n_seqs");
  const Ne head = {S, H, p.i("n_seq_tokens") * n_s, 1};
  Tensor* r = leaf(l, t, head);
  Tensor* w = leaf(l, t, head);
  Tensor* k = leaf(l, t, head);
  Tensor* v = leaf(l, t, head);
  Tensor* a = l2_norm(l.ctx, leaf(l, t, head), 1e-7f);
  Tensor* b = l2_norm(l.ctx, leaf(l, t, head), 1e-7f);
  return rwkv_wkv7(l.ctx, r, w, k, v, a, b, leaf(l, t, {S * S * H, n_s, 1, 1}));
}

// test_gated_delta_net: q, k [S, H, n_t, n_s] (permuted: made [S, n_t, H, n_s] and permuted
// back) L2-normalized, v [S, H*v_repeat, n_t, n_s] in [-0.3, 5], g in [-20, -1e-4], beta in
// [0, 1], state [S, S, H*v_repeat, n_s]; hart's op takes the tokens of all sequences as one dim.
Tensor* gated_delta_net_case(RandomLeaves& l, const Params& p) {
  if (p.flag("kda")) refuse("GATED_DELTA_NET with per-channel gates (kda)");
  if (p.has("K") && p.i("K") != 1) refuse("GATED_DELTA_NET keeping state snapshots");
  const Type t = p.type("type");
  const int64_t S = p.i("head_size"), H = p.i("head_count"), n_t = p.i("n_seq_tokens"), n_s = p.i("n_seqs");
  const int64_t Hv = H * p.i("v_repeat"), T = n_t * n_s;
  const bool perm = p.flag("permuted");
  auto heads = [&](int64_t h, float lo, float hi) {
    return perm ? permute(l.ctx, leaf(l, t, {S, n_t, h, n_s}, lo, hi), 0, 2, 1, 3) : leaf(l, t, {S, h, n_t, n_s}, lo, hi);
  };
  Tensor* q = reshape(l.ctx, l2_norm(l.ctx, heads(H, -1, 1), 1e-6f), {S, H, T});
  Tensor* k = reshape(l.ctx, l2_norm(l.ctx, heads(H, -1, 1), 1e-6f), {S, H, T});
  Tensor* v4 = heads(Hv, -0.3f, 5.0f);
  if (perm && n_s != 1) refuse("GATED_DELTA_NET over permuted v of several sequences");
  Tensor* v = perm ? view(l.ctx, v4, {S, Hv, T}, {v4->nb[1], v4->nb[2]}, 0) : reshape(l.ctx, v4, {S, Hv, T});
  Tensor* g = leaf(l, t, {1, Hv, n_t, n_s}, -20.0f, -1e-4f);
  Tensor* beta = leaf(l, t, {1, Hv, n_t, n_s}, 0.0f, 1.0f);
  Tensor* state = reshape(l.ctx, leaf(l, t, {S, S, Hv, n_s}), {S * S * Hv, n_s});
  return gated_delta_net(l.ctx, q, k, v, g, beta, state);
}

// test_mul_mat: a [k, m, bs0, bs1] @ b [k, n, bs0*nr0, bs1*nr1]; per: both made with permuted
// dims and permuted back; k_v: both views of rows k_v long; o: o products summed.
Tensor* mul_mat_case(RandomLeaves& l, const Params& p) {
  if (p.flag("src_overlap")) refuse("MUL_MAT of overlapping views");
  const Type ta = p.type("type_a"), tb = p.type("type_b");
  const int64_t m = p.i("m"), n = p.i("n"), k = p.i("k"), k_v = p.i("k_v");
  const auto bs = p.list<2>("bs"), nr = p.list<2>("nr");
  const Ne per = p.list<4>("per");
  const Ne ne_a = {k, m, bs[0], bs[1]}, ne_b = {k, n, bs[0] * nr[0], bs[1] * nr[1]};
  Tensor *a, *b;
  if (per != Ne{0, 1, 2, 3}) {
    auto made = [&](Type t, const Ne& ne) {
      return permuted(l, leaf(l, t, {ne[size_t(per[0])], ne[size_t(per[1])], ne[size_t(per[2])], ne[size_t(per[3])]}), per);
    };
    a = made(ta, ne_a);
    b = made(tb, ne_b);
  } else if (k_v != 0) {
    a = sub_view(l, leaf(l, ta, {k_v, m, bs[0], bs[1]}), ne_a);
    b = sub_view(l, leaf(l, tb, {k_v, n, ne_b[2], ne_b[3]}), ne_b);
  } else {
    a = leaf(l, ta, ne_a);
    b = leaf(l, tb, ne_b);
  }
  Tensor* out = mul_mat(l.ctx, a, b);
  for (int64_t i = 1; i < (p.has("o") ? p.i("o") : 1); i++) out = add(l.ctx, out, mul_mat(l.ctx, a, b));
  return out;
}

// test_mul_mat_id: as [k, m, n_mats], b [k, b ? 1 : n_used, n], ids: per token n_used distinct
// experts (the first of a shuffled row of n_mats).
Tensor* mul_mat_id_case(RandomLeaves& l, const Params& p) {
  if (p.has("amax") && p.f("amax") != 1.0f) refuse("MUL_MAT_ID over activations beyond f16's range");
  const int64_t n_mats = p.i("n_mats"), n_used = p.i("n_used"), m = p.i("m"), n = p.i("n"), k = p.i("k");
  Tensor* as = leaf(l, p.type("type_a"), {k, m, n_mats, 1});
  Tensor* ids = distinct_ids(l, Type::I32, {n_mats, n, 1, 1}, n_mats);
  if (n_used != n_mats) ids = view(l.ctx, ids, {n_used, n}, {ids->nb[1]}, 0);
  Tensor* b = leaf(l, p.type("type_b"), {k, p.flag("b") ? 1 : n_used, n, 1});
  return mul_mat_id(l.ctx, as, b, ids);
}

// test_flash_attn_ext: q F32 [hsk, nb, nh*nr0, nr1], k [hsk, kv, nh, nr1], v [hsv, kv, nh, nr1]
// (each made with `permute`d dims and permuted back), mask F16 [kv, nb, 1, nr1], scale
// 1/sqrt(hsk). hart's op takes heads before tokens: q, k and v are handed over permuted.
Tensor* flash_attn_case(RandomLeaves& l, const Params& p) {
  if (p.flag("sinks")) refuse("FLASH_ATTN_EXT with attention sinks");
  if (p.f("max_bias") != 0.0f) refuse("FLASH_ATTN_EXT with ALiBi");
  if (p.f("logit_softcap") != 0.0f) refuse("FLASH_ATTN_EXT with a logit softcap");
  const Type tk = p.type("type_K"), tv = p.type("type_V");
  const int64_t hsk = p.i("hsk"), hsv = p.i("hsv"), nh = p.i("nh"), kv = p.i("kv"), nb = p.i("nb");
  const auto nr = p.list<2>("nr23");
  const Ne per = p.has("permute") ? p.list<4>("permute") : Ne{0, 1, 2, 3};
  auto round_up = [](int64_t x, Type t) { return (x + type_info(t).block_size - 1) / type_info(t).block_size * type_info(t).block_size; };
  auto made = [&](Type t, const Ne& ne) {
    Ne stored;
    for (int d = 0; d < kMaxDims; d++) stored[size_t(per[size_t(d)])] = ne[size_t(d)];
    Tensor* x = leaf(l, t, stored);
    x = per == Ne{0, 1, 2, 3} ? x : permuted(l, x, per);
    return permute(l.ctx, x, 0, 2, 1, 3);  // ggml's [d, tokens, heads] -> hart's [d, heads, tokens]
  };
  Tensor* q = made(Type::F32, {round_up(hsk, tk), nb, nh * nr[0], nr[1]});
  Tensor* k = made(tk, {round_up(hsk, tk), kv, nh, nr[1]});
  Tensor* v = made(tv, {round_up(hsv, tv), kv, nh, nr[1]});
  Tensor* mask = p.flag("mask") ? leaf(l, Type::F16, {kv, nb, 1, nr[1]}) : nullptr;
  return flash_attn_ext(l.ctx, q, k, v, mask, 1.0f / std::sqrt(float(hsk)));
}

// test_top_k without ties (the tied variant checks a graph of sentinels, not the op).
Tensor* top_k_case(RandomLeaves& l, const Params& p) {
  if (p.flag("ties")) refuse("TOP_K over tied values");
  return top_k(l.ctx, leaf(l, p.type("type"), p.list<4>("ne")), int(p.i("k")));
}

// test_sum_rows: slice takes every other plane of all but the first cube; permute (0, 2, 3, 1).
Tensor* sum_rows_case(RandomLeaves& l, const Params& p) {
  const Ne ne = p.list<4>("ne");
  Tensor* a = leaf(l, p.type("type"), ne);
  if (p.flag("slice"))
    a = view(l.ctx, a, {ne[0], ne[1], ne[2] / 2, ne[3] - 1}, {a->nb[1], a->nb[2] * 2, a->nb[3]}, a->nb[3]);
  if (p.flag("permute")) a = permute(l.ctx, a, 0, 2, 3, 1);
  return sum_rows(l.ctx, a);
}

Tensor* clamp_case(RandomLeaves& l, const Params& p) {
  return clamp(l.ctx, leaf(l, p.type("type"), p.list<4>("ne")), p.f("min"), p.f("max"));
}

// test-backend-ops' NMSE thresholds for the cases above.
double cpy_max_nmse(const Params& p) {
  const Type s = p.type("type_src"), d = p.type("type_dst");
  if (s == d) return 0.0;
  double e = 150.0 / 8;  // one quantization step off in a value of [-150, 150]
  switch (d) {
    case Type::IQ4_NL: e *= 2; break;
    case Type::Q5_0: case Type::Q5_1: e /= 2; break;
    case Type::Q8_0: e /= 8; break;
    case Type::Q4_0: case Type::Q4_1: break;
    default: return 1e-6;
  }
  const Ne ne = p.has("ne") ? p.list<4>("ne") : p.list<4>("ne_src");
  return e * e / (150.0 * 150.0 * 0.25 * double(ne[0] * ne[1] * ne[2] * ne[3]));
}

double set_rows_max_nmse(const Params& p) {
  const Type d = p.has("type_dst") ? p.type("type_dst") : p.type("type");
  double e = 1.0 / 8;
  switch (d) {
    case Type::Q5_0: case Type::Q5_1: e /= 2; break;
    case Type::Q8_0: e /= 8; break;
    case Type::Q4_0: case Type::Q4_1: case Type::IQ4_NL: break;
    default: return 1e-7;
  }
  const Ne ne = p.list<4>("ne");
  const auto nr = p.list<2>("nr23");
  return e * e / (0.25 * double(ne[0] * p.i("r") * ne[2] * nr[0] * ne[3] * nr[1]));
}

struct Entry {
  Builder build;
  std::function<double(const Params&)> max_nmse;
};

std::function<double(const Params&)> fixed(double e) {
  return [e](const Params&) { return e; };
}

const std::map<std::string, Entry>& entries() {
  static const std::map<std::string, Entry> table = [] {
    std::map<std::string, Entry> t;
    for (int32_t i = 0; i < int32_t(Unary::COUNT); i++) {
      const Unary u = Unary(i);
      const bool rounding = u == Unary::FLOOR || u == Unary::CEIL || u == Unary::ROUND || u == Unary::TRUNC;
      t[unary_name(u)] = {unary_case(u, rounding ? 10.0f : 1.0f), fixed(1e-7)};
    }
    for (int32_t i = 0; i < int32_t(Glu::COUNT); i++) t[glu_name(Glu(i))] = {glu_case(Glu(i)), fixed(1e-7)};
    t["GET_ROWS"] = {get_rows_case, fixed(1e-7)};
    t["SET_ROWS"] = {set_rows_case, set_rows_max_nmse};
    t["CPY"] = {cpy_case, cpy_max_nmse};
    t["CONT"] = {cont_case, fixed(1e-7)};
    t["ADD"] = {binary_case(add, false), fixed(1e-7)};
    t["SUB"] = {binary_case(sub, false), fixed(1e-7)};
    t["MUL"] = {binary_case(mul, true), fixed(1e-7)};
    t["DIV"] = {binary_case(div, true), fixed(1e-7)};
    t["SCALE"] = {scale_case, fixed(1e-7)};
    t["NORM"] = {norm_case(norm, 1.0f), fixed(1e-7)};
    t["RMS_NORM"] = {norm_case(rms_norm, 10.0f), fixed(1e-7)};
    t["L2_NORM"] = {norm_case(l2_norm, 1.0f), fixed(1e-7)};
    t["SOFT_MAX"] = {soft_max_case, fixed(1e-6)};
    t["ROPE"] = {rope_case, fixed(1e-7)};
    t["CONCAT"] = {concat_case, fixed(1e-7)};
    t["SSM_CONV"] = {ssm_conv_case, fixed(1e-7)};
    t["RWKV_WKV7"] = {rwkv_wkv7_case, fixed(1e-7)};
    t["GATED_DELTA_NET"] = {gated_delta_net_case, fixed(1e-7)};
    t["MUL_MAT"] = {mul_mat_case, fixed(5e-4)};
    t["MUL_MAT_ID"] = {mul_mat_id_case, fixed(5e-4)};
    t["FLASH_ATTN_EXT"] = {flash_attn_case, fixed(5e-4)};
    t["TOP_K"] = {top_k_case, fixed(0.0)};
    t["SUM_ROWS"] = {sum_rows_case, fixed(1e-7)};
    t["CLAMP"] = {clamp_case, fixed(1e-7)};
    return t;
  }();
  return table;
}

// One CSV line's fields (RFC 4180 quoting: "" inside quotes is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); i++) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      i++;
    } else if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

}  // namespace

std::vector<CaseRow> read_case_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  std::string line;
  if (!std::getline(in, line)) throw Error(path + " is empty");
  const std::vector<std::string> header = csv_fields(line);
  const auto column = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw Error(path + " has no " + name + " column: not a test-backend-ops report");
    return size_t(it - header.begin());
  };
  const size_t op = column("op_name"), params = column("op_params");
  std::vector<CaseRow> rows;
  for (size_t n = 2; std::getline(in, line); n++) {
    if (line.empty()) continue;
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != header.size())
      throw Error(path + ":" + std::to_string(n) + ": " + std::to_string(f.size()) + " fields, the header has " +
                  std::to_string(header.size()));
    rows.push_back({f[op], f[params]});
  }
  return rows;
}

OpCase ggml_case(const CaseRow& row) {
  const auto it = entries().find(row.op_name);
  if (it == entries().end()) {
    return {row.op_name, row.op_params, 0.0,
            [name = row.op_name](RandomLeaves&) -> Tensor* { throw Error("hart has no op " + name); }};
  }
  const Entry& e = it->second;
  double max_nmse = 0.0;
  try {
    max_nmse = e.max_nmse(Params(row.op_params));
  } catch (const std::exception&) {
    // a malformed row: its build reports it
  }
  return {row.op_name, row.op_params, max_nmse, [build = e.build, params = row.op_params](RandomLeaves& l) {
            try {
              return build(l, Params(params));
            } catch (const std::logic_error& e) {  // std::stoll / std::stof on a malformed value
              throw Error(std::string("malformed parameters: ") + e.what());
            }
          }};
}

}  // namespace hart::testing
