// FLASH_ATTN_EXT: softmax(q·kᵀ · scale + mask) · v without materialising the score matrix:
// one pass over the KV positions with an online softmax (running max M, running sum S, F32
// accumulator rescaled whenever M grows). Query head h reads KV head h / (n_head / n_head_kv).
//
// A work unit is (token, KV head, a chunk of that KV head's query heads): the K and V rows are
// converted once per unit and reused by every query head of the chunk (GQA).
#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

struct Shape {
  int64_t d, dv, n_head, n_head_kv, n_tok, n_kv;
  int64_t group;      // query heads per KV head
  int64_t chunk;      // query heads per work unit
  int64_t n_chunks;   // chunks per KV head
  Type act;           // q converted to K's activation type for the dot product
};

Shape shape_of(const Tensor& node, const Kernels& k, int nth) {
  const Tensor& q = *node.src[0];
  const Tensor& kt = *node.src[1];
  const Tensor& v = *node.src[2];
  Shape s{};
  s.d = q.ne[0];
  s.dv = v.ne[0];
  s.n_head = q.ne[1];
  s.n_tok = q.ne[2];
  s.n_head_kv = kt.ne[1];
  s.n_kv = kt.ne[2];
  s.group = s.n_head / s.n_head_kv;
  // Split a group only when there would be too few units to keep every thread busy.
  const int64_t units = s.n_tok * s.n_head_kv;
  s.n_chunks = std::min<int64_t>(s.group, std::max<int64_t>(1, (2 * nth + units - 1) / units));
  s.chunk = (s.group + s.n_chunks - 1) / s.n_chunks;
  s.act = k.dot[size_t(kt.type)].act_type;
  return s;
}

// Per-thread scratch: converted q rows, accumulators, M and S per head, one V row as floats.
struct Scratch {
  std::byte* q;
  float *acc, *m, *s, *v;
};

size_t scratch_bytes(const Shape& s) {
  return align_up(size_t(s.chunk) * row_size(s.act, s.d)) +
         align_up(size_t(s.chunk * s.dv) * sizeof(float)) + 2 * align_up(size_t(s.chunk) * sizeof(float)) +
         align_up(size_t(s.dv) * sizeof(float));
}

Scratch scratch(const Shape& s, std::byte* base) {
  Scratch sc{};
  sc.q = base;
  base += align_up(size_t(s.chunk) * row_size(s.act, s.d));
  sc.acc = reinterpret_cast<float*>(base);
  base += align_up(size_t(s.chunk * s.dv) * sizeof(float));
  sc.m = reinterpret_cast<float*>(base);
  base += align_up(size_t(s.chunk) * sizeof(float));
  sc.s = reinterpret_cast<float*>(base);
  base += align_up(size_t(s.chunk) * sizeof(float));
  sc.v = reinterpret_cast<float*>(base);
  return sc;
}

size_t attn_work_size(const Tensor& node, const Kernels& k, int nth) {
  return size_t(nth) * align_up(scratch_bytes(shape_of(node, k, nth)));
}

void compute_unit(const Tensor& node, const OpContext& ctx, const Shape& s, const Scratch& sc,
                  int64_t tok, int64_t kv_head, int64_t h0, int64_t h1) {
  const Tensor& q = *node.src[0];
  const Tensor& kt = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const float scale = node.param_f32(0);
  const Kernels& k = ctx.k;
  const VecDotFn dot = k.dot[size_t(kt.type)].vec_dot;
  const size_t q_row = row_size(s.act, s.d);
  const int64_t nh = h1 - h0;

  for (int64_t h = 0; h < nh; h++) {
    const float* qh = frow(q, {h0 + h, tok, 0});
    if (s.act == Type::F32) std::copy(qh, qh + s.d, reinterpret_cast<float*>(sc.q + size_t(h) * q_row));
    else k.from_f32[size_t(s.act)](qh, sc.q + size_t(h) * q_row, s.d);
    std::fill(sc.acc + h * s.dv, sc.acc + (h + 1) * s.dv, 0.0f);
    sc.m[h] = -INFINITY;
    sc.s[h] = 0.0f;
  }
  const float* mrow = mask ? frow(*mask, {tok, 0, 0}) : nullptr;
  for (int64_t j = 0; j < s.n_kv; j++) {
    const float bias = mrow ? mrow[j] : 0.0f;
    if (bias == -INFINITY) continue;
    const char* krow = row_ptr(kt, kv_head, j, 0);
    const char* vraw = row_ptr(v, kv_head, j, 0);
    const float* vrow = reinterpret_cast<const float*>(vraw);
    if (v.type != Type::F32) {
      k.to_f32[size_t(v.type)](vraw, sc.v, s.dv);
      vrow = sc.v;
    }
    for (int64_t h = 0; h < nh; h++) {
      float score;
      dot(s.d, &score, krow, sc.q + size_t(h) * q_row);
      score = score * scale + bias;
      float* acc = sc.acc + h * s.dv;
      float weight = 1.0f;
      if (score > sc.m[h]) {  // new maximum: rescale what was accumulated so far
        const float shrink = std::exp(sc.m[h] - score);
        sc.m[h] = score;
        sc.s[h] *= shrink;
        k.scale(s.dv, acc, shrink, acc);
      } else {
        weight = std::exp(score - sc.m[h]);
      }
      sc.s[h] += weight;
      k.axpy(s.dv, weight, vrow, acc);
    }
  }
  for (int64_t h = 0; h < nh; h++) {
    // A fully masked row has no probability mass: its output is 0.
    const float inv = sc.s[h] > 0.0f ? 1.0f / sc.s[h] : 0.0f;
    k.scale(s.dv, sc.acc + h * s.dv, inv, reinterpret_cast<float*>(row_ptr(node, h0 + h, tok, 0)));
  }
}

void compute_flash_attn(const Tensor& node, const OpContext& ctx) {
  // q [d, n_head, n_tok], k [d, n_head_kv, n_kv], v [dv, n_head_kv, n_kv] -> y [dv, n_head, n_tok]
  const Shape s = shape_of(node, ctx.k, ctx.nth);
  const Scratch sc = scratch(s, ctx.thread_work(scratch_bytes(s)));
  const int64_t n_units = s.n_tok * s.n_head_kv * s.n_chunks;
  // Interleaved: under a causal mask later tokens cost more, so contiguous ranges would not balance.
  for (int64_t u = ctx.ith; u < n_units; u += ctx.nth) {
    const int64_t c = u % s.n_chunks;
    const int64_t kv_head = (u / s.n_chunks) % s.n_head_kv;
    const int64_t tok = u / (s.n_chunks * s.n_head_kv);
    const int64_t h0 = kv_head * s.group + c * s.chunk;
    const int64_t h1 = std::min(h0 + s.chunk, (kv_head + 1) * s.group);
    if (h0 < h1) compute_unit(node, ctx, s, sc, tok, kv_head, h0, h1);
  }
}

bool attn_supported(const Tensor& node, const Kernels& k) {
  const Type kt = node.src[1]->type, vt = node.src[2]->type;
  const DotKernel& d = k.dot[size_t(kt)];
  return d.vec_dot && (d.act_type == Type::F32 || k.from_f32[size_t(d.act_type)]) &&
         (vt == Type::F32 || k.to_f32[size_t(vt)]);
}

}  // namespace

OpImpl impl_flash_attn_ext() { return {compute_flash_attn, attn_work_size, attn_supported}; }

}  // namespace hart::cpu
