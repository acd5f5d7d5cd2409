// Op builders: check shapes and types once, here, so kernels can trust them.
#include <cmath>
#include <string>

#include "graph/builder.h"

namespace hart {

using detail::check_rows_contiguous;
using detail::check_type;
using detail::describe;
using detail::fail;

namespace {

bool is_float_type(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }

bool same_shape(const Tensor* a, const Tensor* b) {
  for (int i = 0; i < kMaxDims; i++)
    if (a->ne[i] != b->ne[i]) return false;
  return true;
}

const int64_t (&shape_of(const Tensor* t))[kMaxDims] { return t->ne; }

// An F32 tensor whose rows row kernels can read.
void check_f32_rows(const Tensor* t, Op op, const char* role) {
  check_type(t, Type::F32, op, role);
  check_rows_contiguous(t, op, role);
}

// b broadcasts over a: every size of b divides the matching size of a.
void check_broadcast(const Tensor* a, const Tensor* b, Op op) {
  for (int i = 0; i < kMaxDims; i++)
    if (a->ne[i] % b->ne[i] != 0)
      fail(op, describe(b) + " does not broadcast over " + describe(a) + " (dim " + std::to_string(i) + ")");
}

Tensor* binary(Context& c, Op op, Tensor* a, Tensor* b) {
  check_f32_rows(a, op, "src0");
  check_f32_rows(b, op, "src1");
  check_broadcast(a, b, op);
  return detail::new_node(c, op, Type::F32, shape_of(a), {a, b});
}

}  // namespace

Tensor* get_rows(Context& c, Tensor* table, Tensor* ids) {
  // table [n, rows, b2, b3], ids I32 [m, b2, b3] -> F32 [n, m, b2, b3]
  const Op op = Op::GET_ROWS;
  check_type(ids, Type::I32, op, "ids");
  check_rows_contiguous(table, op, "table");
  if (!(ids->ne[3] == 1 && table->ne[2] == ids->ne[1] && table->ne[3] == ids->ne[2]))
    fail(op, "ids " + describe(ids) + " do not match the batch dims of table " + describe(table));
  const int64_t ne[kMaxDims] = {table->ne[0], ids->ne[0], ids->ne[1], ids->ne[2]};
  return detail::new_node(c, op, Type::F32, ne, {table, ids});
}

Tensor* set_rows(Context& c, Tensor* dst, Tensor* src, Tensor* ids, Tensor* after) {
  // dst [n, rows, d2, d3], src F32 [n, m, d2, d3], ids I64|I32 [m, i1, i2] with d2 % i1 == 0
  // and d3 % i2 == 0: dst(:, ids(j, i2 % i1, i3 % i2), i2, i3) = src(:, j, i2, i3)
  const Op op = Op::SET_ROWS;
  check_f32_rows(src, op, "src");
  check_rows_contiguous(dst, op, "dst");
  if (!(ids->type == Type::I64 || ids->type == Type::I32))
    fail(op, "ids must be i64 or i32, got " + describe(ids));
  if (!(dst->ne[0] == src->ne[0] && dst->ne[2] == src->ne[2] && dst->ne[3] == src->ne[3]))
    fail(op, "src " + describe(src) + " does not fit dst " + describe(dst));
  if (!(ids->ne[0] == src->ne[1] && ids->ne[3] == 1 && src->ne[2] % ids->ne[1] == 0 &&
        src->ne[3] % ids->ne[2] == 0))
    fail(op, "ids " + describe(ids) + " do not match src " + describe(src));
  Tensor* t = detail::new_view(c, op, dst, shape_of(dst), dst->nb, 0);
  t->src[1] = src;
  t->src[2] = ids;
  t->src[3] = after;
  return t;
}

Tensor* cpy(Context& c, Tensor* src, Tensor* dst) {
  // Same shape: row by row, any types (quantized rows must be contiguous).
  // Same element count, different shapes: element by element in src order, float types only.
  const Op op = Op::CPY;
  if (src->nelements() != dst->nelements())
    fail(op, describe(src) + " and " + describe(dst) + " differ in element count");
  const bool rows_ok = same_shape(src, dst) && src->nb[0] == type_info(src->type).type_size &&
                       dst->nb[0] == type_info(dst->type).type_size;
  if (!(rows_ok || (is_float_type(src->type) && is_float_type(dst->type))))
    fail(op, "copying " + describe(src) + " to " + describe(dst) +
                 " needs equal shapes and contiguous rows unless both are float types");
  Tensor* t = detail::new_view(c, op, dst, shape_of(dst), dst->nb, 0);
  t->src[0] = src;
  t->src[1] = dst;
  return t;
}

Tensor* cont(Context& c, Tensor* a) {
  if (!(!type_info(a->type).quantized || a->nb[0] == type_info(a->type).type_size))
    fail(Op::CONT, "quantized " + describe(a) + " must have contiguous rows");
  return detail::new_node(c, Op::CONT, a->type, shape_of(a), {a});
}

Tensor* concat(Context& c, Tensor* a, Tensor* b, int dim) {
  const Op op = Op::CONCAT;
  check_f32_rows(a, op, "src0");
  check_f32_rows(b, op, "src1");
  if (!(dim >= 0 && dim < kMaxDims)) fail(op, "dim " + std::to_string(dim) + " is not 0..3");
  int64_t ne[kMaxDims];
  for (int i = 0; i < kMaxDims; i++) {
    if (i != dim && a->ne[i] != b->ne[i])
      fail(op, describe(a) + " and " + describe(b) + " differ outside dim " + std::to_string(dim));
    ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
  }
  Tensor* t = detail::new_node(c, op, Type::F32, ne, {a, b});
  t->params[0] = dim;
  return t;
}

Tensor* add(Context& c, Tensor* a, Tensor* b) { return binary(c, Op::ADD, a, b); }
Tensor* sub(Context& c, Tensor* a, Tensor* b) { return binary(c, Op::SUB, a, b); }
Tensor* mul(Context& c, Tensor* a, Tensor* b) { return binary(c, Op::MUL, a, b); }
Tensor* div(Context& c, Tensor* a, Tensor* b) { return binary(c, Op::DIV, a, b); }

Tensor* scale(Context& c, Tensor* a, float s, float bias) {
  check_f32_rows(a, Op::SCALE, "src0");
  Tensor* t = detail::new_node(c, Op::SCALE, Type::F32, shape_of(a), {a});
  t->set_param_f32(0, s);
  t->set_param_f32(1, bias);
  return t;
}

Tensor* unary(Context& c, Tensor* a, Unary kind) {
  if (!(int32_t(kind) >= 0 && kind < Unary::COUNT))
    fail(Op::UNARY, "unknown kind " + std::to_string(int32_t(kind)));
  check_f32_rows(a, Op::UNARY, "src0");
  Tensor* t = detail::new_node(c, Op::UNARY, Type::F32, shape_of(a), {a});
  t->params[0] = int32_t(kind);
  return t;
}

Tensor* clamp(Context& c, Tensor* a, float min, float max) {
  check_f32_rows(a, Op::CLAMP, "src0");
  if (!(min <= max)) fail(Op::CLAMP, "min " + std::to_string(min) + " is above max " + std::to_string(max));
  Tensor* t = detail::new_node(c, Op::CLAMP, Type::F32, shape_of(a), {a});
  t->set_param_f32(0, min);
  t->set_param_f32(1, max);
  return t;
}

Tensor* glu(Context& c, Tensor* gate, Tensor* up, Glu kind) {
  if (!(int32_t(kind) >= 0 && kind < Glu::COUNT))
    fail(Op::GLU, "unknown kind " + std::to_string(int32_t(kind)));
  check_f32_rows(gate, Op::GLU, "gate");
  check_f32_rows(up, Op::GLU, "up");
  if (!(same_shape(gate, up)))
    fail(Op::GLU, "gate " + describe(gate) + " and up " + describe(up) + " differ");
  Tensor* t = detail::new_node(c, Op::GLU, Type::F32, shape_of(gate), {gate, up});
  t->params[0] = int32_t(kind);
  return t;
}

namespace {

Tensor* row_norm(Context& c, Op op, Tensor* a, float eps) {
  check_f32_rows(a, op, "src0");
  if (!(eps >= 0.0f)) fail(op, "eps must be >= 0");
  Tensor* t = detail::new_node(c, op, Type::F32, shape_of(a), {a});
  t->set_param_f32(0, eps);
  return t;
}

}  // namespace

Tensor* rms_norm(Context& c, Tensor* a, float eps) { return row_norm(c, Op::RMS_NORM, a, eps); }
Tensor* norm(Context& c, Tensor* a, float eps) { return row_norm(c, Op::NORM, a, eps); }
Tensor* l2_norm(Context& c, Tensor* a, float eps) { return row_norm(c, Op::L2_NORM, a, eps); }

Tensor* sum_rows(Context& c, Tensor* a) {
  check_f32_rows(a, Op::SUM_ROWS, "src0");
  const int64_t ne[kMaxDims] = {1, a->ne[1], a->ne[2], a->ne[3]};
  return detail::new_node(c, Op::SUM_ROWS, Type::F32, ne, {a});
}

Tensor* top_k(Context& c, Tensor* a, int k) {
  check_f32_rows(a, Op::TOP_K, "src0");
  if (!(k >= 1 && k <= a->ne[0])) fail(Op::TOP_K, "k = " + std::to_string(k) + " for rows of " + describe(a));
  const int64_t ne[kMaxDims] = {k, a->ne[1], a->ne[2], a->ne[3]};
  return detail::new_node(c, Op::TOP_K, Type::I32, ne, {a});
}

Tensor* soft_max(Context& c, Tensor* a, Tensor* mask, float scale, float max_bias, Tensor* sinks) {
  const Op op = Op::SOFT_MAX;
  if (!(max_bias >= 0.0f && std::isfinite(max_bias))) fail(op, "ALiBi's max_bias must be finite and >= 0");
  check_f32_rows(a, op, "src0");
  if (mask) {
    // mask F32 or F16 [ne0, >= ne1, b2, b3], broadcast over a's dims 2 and 3
    if (!(mask->type == Type::F32 || mask->type == Type::F16)) fail(op, "mask " + describe(mask) + " must be f32 or f16");
    check_rows_contiguous(mask, op, "mask");
    if (!(mask->ne[0] == a->ne[0] && mask->ne[1] >= a->ne[1] && a->ne[2] % mask->ne[2] == 0 &&
          a->ne[3] % mask->ne[3] == 0))
      fail(op, "mask " + describe(mask) + " does not fit " + describe(a));
  }
  if (sinks) {
    check_type(sinks, Type::F32, op, "sinks");
    if (!(sinks->is_contiguous() && sinks->nelements() == a->ne[2]))
      fail(op, "sinks " + describe(sinks) + " must hold one value per plane (head) of " + describe(a));
  }
  Tensor* t = detail::new_node(c, op, Type::F32, shape_of(a), {a, mask, sinks});
  t->set_param_f32(0, scale);
  t->set_param_f32(1, max_bias);
  return t;
}

float alibi_slope(float max_bias, int64_t h, int64_t n_head) {
  if (max_bias <= 0.0f) return 1.0f;
  const int64_t n_head_log2 = int64_t(1) << int(std::floor(std::log2(double(n_head))));
  const float m0 = std::pow(2.0f, -max_bias / float(n_head_log2));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / float(n_head_log2));
  return h < n_head_log2 ? std::pow(m0, float(h + 1)) : std::pow(m1, float(2 * (h - n_head_log2) + 1));
}

namespace {

// ggml_rope_yarn_corr_dim: the pair whose wavelength fits n_rot rotations in n_ctx_orig positions.
float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return float(n_dims) * std::log(float(n_ctx_orig) / (n_rot * 2.0f * float(M_PI))) / (2.0f * std::log(base));
}

}  // namespace

Tensor* rope(Context& c, Tensor* a, Tensor* pos, Tensor* freq_factors, RopeMode mode, int n_dims,
             float freq_base, float freq_scale, float attn_factor, const RopeYarn& yarn) {
  // a [d, n_head, n_tok, b3], pos I32 [n_tok], freq_factors F32 [>= n_dims/2]
  const Op op = Op::ROPE;
  if (!(mode == RopeMode::NORMAL || mode == RopeMode::NEOX))
    fail(op, "mode " + std::to_string(int32_t(mode)) + " is not supported (NORMAL = 0, NEOX = 2)");
  check_f32_rows(a, op, "src0");
  check_type(pos, Type::I32, op, "positions");
  if (!(pos->ne[0] == a->ne[2] && pos->nelements() == pos->ne[0]))
    fail(op, "positions " + describe(pos) + " must be [" + std::to_string(a->ne[2]) + "] for " + describe(a));
  if (!(n_dims > 0 && n_dims % 2 == 0 && n_dims <= a->ne[0]))
    fail(op, "n_dims " + std::to_string(n_dims) + " must be even and in 2.." + std::to_string(a->ne[0]));
  if (!(freq_base > 0.0f && freq_scale > 0.0f)) fail(op, "freq_base and freq_scale must be positive");
  if (!std::isfinite(attn_factor)) fail(op, "attn_factor must be finite");
  if (freq_factors) {
    check_type(freq_factors, Type::F32, op, "freq_factors");
    if (!(freq_factors->ne[0] >= n_dims / 2 && freq_factors->is_contiguous()))
      fail(op, "freq_factors " + describe(freq_factors) + " must be contiguous with >= n_dims/2 elements");
  }
  if (!std::isfinite(yarn.ext_factor)) fail(op, "YaRN's ext_factor must be finite");
  Tensor* t = detail::new_node(c, op, Type::F32, shape_of(a), {a, pos, freq_factors});
  t->params[0] = int32_t(mode);
  t->params[1] = n_dims;
  t->set_param_f32(2, freq_base);
  t->set_param_f32(3, freq_scale);
  t->set_param_f32(4, attn_factor);
  t->set_param_f32(5, yarn.ext_factor);
  // ggml_rope_yarn_corr_dims, in float as ggml (n_ctx_orig 0 gives -inf: only pair 0 ramps)
  t->set_param_f32(6, std::max(0.0f, std::floor(yarn_corr_dim(n_dims, yarn.n_ctx_orig, yarn.beta_fast, freq_base))));
  t->set_param_f32(7, std::min(float(n_dims - 1), std::ceil(yarn_corr_dim(n_dims, yarn.n_ctx_orig, yarn.beta_slow, freq_base))));
  return t;
}

Tensor* ssm_conv(Context& c, Tensor* sx, Tensor* kernel) {
  const Op op = Op::SSM_CONV;
  check_f32_rows(sx, op, "sx");
  check_f32_rows(kernel, op, "kernel");
  const int64_t k = kernel->ne[0], channels = kernel->ne[1];
  if (!(kernel->ne[2] == 1 && kernel->ne[3] == 1 && sx->ne[3] == 1 && sx->ne[1] == channels && k >= 1 &&
        sx->ne[0] >= k))
    fail(op, "sx " + describe(sx) + " does not fit the kernel " + describe(kernel));
  const int64_t ne[kMaxDims] = {channels, sx->ne[0] - k + 1, sx->ne[2], 1};
  return detail::new_node(c, op, Type::F32, ne, {sx, kernel});
}

namespace {

// The recurrent ops' initial states: `state` [row, n_s] itself, or with `cells` (I32 [n_s]) the
// store [row, cells] whose column cells[s] sequence s starts from. Returns n_s.
int64_t check_state(Op op, const Tensor* state, const Tensor* cells, int64_t row, int64_t T) {
  check_type(state, Type::F32, op, "state");
  if (cells && !(cells->type == Type::I32 && cells->is_contiguous() && cells->ne[1] == 1 && cells->ne[2] == 1 &&
                 cells->ne[3] == 1))
    fail(op, "cells " + describe(cells) + " must be contiguous i32 [n_seqs]");
  const int64_t n_s = cells ? cells->ne[0] : state->ne[1];
  if (!(state->is_contiguous() && state->ne[0] == row && state->ne[2] == 1 && n_s >= 1 && T >= n_s && T % n_s == 0))
    fail(op, "state " + describe(state) + (cells ? " must be [S*S*H, cells]" : " must be [S*S*H, n_seqs]") +
                 " with T a positive multiple of n_seqs");
  return n_s;
}

}  // namespace

Tensor* rwkv_wkv7(Context& c, Tensor* r, Tensor* w, Tensor* k, Tensor* v, Tensor* a, Tensor* b, Tensor* state,
                  Tensor* cells) {
  const Op op = Op::RWKV_WKV7;
  const int64_t S = r->ne[0], H = r->ne[1], T = r->ne[2];
  for (Tensor* x : {r, w, k, v, a, b}) {
    check_type(x, Type::F32, op, "r/w/k/v/a/b");
    if (!(x->is_contiguous() && x->ne[0] == S && x->ne[1] == H && x->ne[2] == T && x->ne[3] == 1))
      fail(op, describe(x) + " does not match r " + describe(r) + " (all contiguous [S, H, T])");
  }
  const int64_t n_s = check_state(op, state, cells, S * S * H, T);
  const int64_t ne[kMaxDims] = {S * H, T + S * n_s, 1, 1};
  Tensor* t = detail::new_node(c, op, Type::F32, ne, {r, w, k, v});
  t->src[4] = a;
  t->src[5] = b;
  t->src[6] = state;
  t->src[7] = cells;
  return t;
}

Tensor* gated_delta_net(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* g, Tensor* beta, Tensor* state,
                        Tensor* cells) {
  const Op op = Op::GATED_DELTA_NET;
  const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2];
  check_f32_rows(v, op, "v");
  for (Tensor* x : {q, k}) {
    check_f32_rows(x, op, "q/k");
    if (!(x->ne[0] == S && x->ne[1] >= 1 && H % x->ne[1] == 0 && x->ne[1] == q->ne[1] && x->ne[2] == T &&
          x->ne[3] == 1 && v->ne[3] == 1))
      fail(op, "q " + describe(q) + " and k " + describe(k) + " do not fit v " + describe(v));
  }
  for (Tensor* x : {g, beta}) {
    check_type(x, Type::F32, op, "g/beta");
    if (!(x->is_contiguous() && x->nelements() == H * T && x->ne[x->ne[0] == 1 ? 1 : 0] == H))
      fail(op, "g/beta " + describe(x) + " must hold one value per head and token of v " + describe(v));
  }
  const int64_t n_s = check_state(op, state, cells, S * S * H, T);
  const int64_t ne[kMaxDims] = {S * H, T + S * n_s, 1, 1};
  Tensor* t = detail::new_node(c, op, Type::F32, ne, {q, k, v, g});
  t->src[4] = beta;
  t->src[5] = state;
  t->src[6] = cells;
  return t;
}

Tensor* mul_mat(Context& c, Tensor* w, Tensor* x) {
  // W [k, n, b2, b3] @ X F32|F16 [k, m, b2*r2, b3*r3] -> F32 [n, m, b2*r2, b3*r3]
  const Op op = Op::MUL_MAT;
  if (!(x->type == Type::F32 || x->type == Type::F16))
    fail(op, "src1 (activations) " + describe(x) + " must be f32 or f16");
  check_rows_contiguous(w, op, "src0 (weights)");
  if (w->ne[0] != x->ne[0]) fail(op, "inner sizes differ: " + describe(w) + " vs " + describe(x));
  if (!(x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0))
    fail(op, describe(w) + " does not broadcast over the batch dims of " + describe(x));
  const int64_t ne[kMaxDims] = {w->ne[1], x->ne[1], x->ne[2], x->ne[3]};
  return detail::new_node(c, op, Type::F32, ne, {w, x});
}

Tensor* mul_mat_id(Context& c, Tensor* experts, Tensor* x, Tensor* ids) {
  // experts [k, n, E] x X F32 [k, 1 | n_used, T] by ids I32 [n_used, T] -> F32 [n, n_used, T]
  const Op op = Op::MUL_MAT_ID;
  check_type(x, Type::F32, op, "src1 (activations)");
  check_type(ids, Type::I32, op, "ids");
  check_rows_contiguous(experts, op, "src0 (experts)");
  const int64_t n_used = ids->ne[0], T = ids->ne[1];
  if (experts->ne[0] != x->ne[0]) fail(op, "inner sizes differ: " + describe(experts) + " vs " + describe(x));
  if (!(experts->ne[3] == 1 && x->ne[3] == 1 && ids->ne[2] == 1 && ids->ne[3] == 1 && x->ne[2] == T &&
        (x->ne[1] == 1 || x->ne[1] == n_used)))
    fail(op, "x " + describe(x) + " and ids " + describe(ids) + " do not fit experts " + describe(experts));
  const int64_t ne[kMaxDims] = {experts->ne[1], n_used, T, 1};
  return detail::new_node(c, op, Type::F32, ne, {experts, x, ids});
}

namespace {

// q F32 [d, n_head, n_tok, b3], k [d, n_head_kv, n_kv, b3], v [dv, n_head_kv, n_kv, b3]
// (F32/F16/BF16, any row strides), as both attention ops take them.
void check_attention_qkv(const Tensor* q, const Tensor* k, const Tensor* v, Op op) {
  check_f32_rows(q, op, "q");
  if (!(is_float_type(k->type) && is_float_type(v->type)))
    fail(op, "k " + describe(k) + " and v " + describe(v) + " must be f32, f16 or bf16");
  check_rows_contiguous(k, op, "k");
  check_rows_contiguous(v, op, "v");
  if (!(k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3]))
    fail(op, "q " + describe(q) + ", k " + describe(k) + " and v " + describe(v) + " differ in dim 3");
  if (q->ne[0] != k->ne[0]) fail(op, "head sizes of q " + describe(q) + " and k " + describe(k) + " differ");
  if (!(k->ne[1] == v->ne[1] && k->ne[2] == v->ne[2]))
    fail(op, "k " + describe(k) + " and v " + describe(v) + " differ in heads or length");
  if (q->ne[1] % k->ne[1] != 0)
    fail(op, std::to_string(q->ne[1]) + " query heads are not a multiple of " + std::to_string(k->ne[1]) +
                 " kv heads");
}

}  // namespace

Tensor* flash_attn_ext(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale) {
  // mask F32 or F16 (llama.cpp's) [n_kv, >= n_tok, 1, 1 | b3] -> F32 [dv, n_head, n_tok, b3]
  const Op op = Op::FLASH_ATTN_EXT;
  check_attention_qkv(q, k, v, op);
  if (mask) {
    if (!(mask->type == Type::F32 || mask->type == Type::F16)) fail(op, "mask " + describe(mask) + " must be f32 or f16");
    check_rows_contiguous(mask, op, "mask");
    if (!(mask->ne[0] == k->ne[2] && mask->ne[1] >= q->ne[2] && mask->ne[2] == 1 &&
          (mask->ne[3] == 1 || mask->ne[3] == q->ne[3])))
      fail(op, "mask " + describe(mask) + " must be [" + std::to_string(k->ne[2]) + ", >= " +
                   std::to_string(q->ne[2]) + ", 1, 1 or " + std::to_string(q->ne[3]) + "]");
  }
  if (!(std::isfinite(scale))) fail(op, "scale must be finite");
  const int64_t ne[kMaxDims] = {v->ne[0], q->ne[1], q->ne[2], q->ne[3]};
  Tensor* t = detail::new_node(c, op, Type::F32, ne, {q, k, v, mask});
  t->set_param_f32(0, scale);
  return t;
}

Tensor* paged_attn(Context& c, Tensor* q, Tensor* k, Tensor* v, Tensor* index, float scale) {
  // k, v [d, n_head_kv, n_slots], index I32 [>= 2*n_tok] -> F32 [dv, n_head, n_tok]
  const Op op = Op::PAGED_ATTN;
  check_attention_qkv(q, k, v, op);
  if (q->ne[3] != 1) fail(op, "4-D q, k or v is not supported");
  check_type(index, Type::I32, op, "index");
  if (!(index->is_contiguous() && index->nelements() == index->ne[0] && index->ne[0] >= 2 * q->ne[2]))
    fail(op, "index " + describe(index) + " must be 1-D with at least 2 entries per token of " + describe(q));
  if (!(std::isfinite(scale))) fail(op, "scale must be finite");
  const int64_t ne[kMaxDims] = {v->ne[0], q->ne[1], q->ne[2], 1};
  Tensor* t = detail::new_node(c, op, Type::F32, ne, {q, k, v, index});
  t->set_param_f32(0, scale);
  return t;
}

}  // namespace hart
