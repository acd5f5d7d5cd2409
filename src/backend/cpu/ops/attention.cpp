// FLASH_ATTN_EXT: softmax(q·kᵀ · scale + mask) · v without materialising the score matrix:
// one pass over the KV positions with an online softmax (online_softmax.h). Query head h reads
// KV head h / (n_head / n_head_kv).
//
// A work unit is (token, KV head, a chunk of that KV head's query heads): the K and V rows are
// converted once per unit and reused by every query head of the chunk (GQA).
#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/online_softmax.h"

namespace hart::cpu {
namespace {

struct Shape {
  int64_t d, dv, n_head, n_head_kv, n_tok, n_kv, n_batch;
  int64_t group;      // query heads per KV head
  int64_t chunk;      // query heads per work unit
  int64_t n_chunks;   // chunks per KV head
};

Shape shape_of(const Tensor& node, int nth) {
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
  s.n_batch = q.ne[3];
  s.group = s.n_head / s.n_head_kv;
  // Split a group only when there would be too few units to keep every thread busy.
  const int64_t units = s.n_tok * s.n_head_kv * s.n_batch;
  s.n_chunks = std::min<int64_t>(s.group, std::max<int64_t>(1, (2 * nth + units - 1) / units));
  s.chunk = (s.group + s.n_chunks - 1) / s.n_chunks;
  return s;
}

// One unit's softmax state: a chunk of query heads.
OnlineSoftmax softmax_of(const Tensor& node, const Kernels& k, const Shape& s) {
  return OnlineSoftmax(k, node.src[1]->type, node.src[2]->type, s.chunk, s.d, s.dv);
}

size_t attn_work_size(const Tensor& node, const Kernels& k, int nth) {
  return size_t(nth) * align_up(softmax_of(node, k, shape_of(node, nth)).scratch_bytes());
}

void compute_unit(const Tensor& node, OnlineSoftmax& sm, int64_t tok, int64_t b, int64_t kv_head, int64_t h0,
                  int64_t h1, int64_t n_kv) {
  const Tensor& q = *node.src[0];
  const Tensor& kt = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const float scale = node.param_f32(0);
  const int64_t nh = h1 - h0;

  for (int64_t h = 0; h < nh; h++) sm.start(h, frow(q, {h0 + h, tok, b}));
  const char* mrow = mask ? row_ptr(*mask, tok, 0, b % mask->ne[3]) : nullptr;
  // Blocks of the K/V rows the mask leaves in.
  const char* krows[OnlineSoftmax::kBlock];
  const char* vrows[OnlineSoftmax::kBlock];
  float bias[OnlineSoftmax::kBlock];
  int64_t n = 0;
  for (int64_t j = 0; j < n_kv; j++) {
    bias[n] = mrow ? f32_or_f16_at(*mask, mrow, j) : 0.0f;
    if (bias[n] == -INFINITY) continue;
    krows[n] = row_ptr(kt, kv_head, j, b);
    vrows[n] = row_ptr(v, kv_head, j, b);
    if (++n == OnlineSoftmax::kBlock) {
      sm.add(0, nh, n, krows, vrows, scale, bias);
      n = 0;
    }
  }
  if (n > 0) sm.add(0, nh, n, krows, vrows, scale, bias);
  for (int64_t h = 0; h < nh; h++) sm.finish(h, reinterpret_cast<float*>(row_ptr(node, h0 + h, tok, b)));
}

void compute_flash_attn(const Tensor& node, const OpContext& ctx) {
  // q [d, n_head, n_tok, b3], k [d, n_head_kv, n_kv, b3], v [dv, n_head_kv, n_kv, b3] -> y [dv, n_head, n_tok, b3]
  const Shape s = shape_of(node, ctx.nth);
  OnlineSoftmax sm = softmax_of(node, ctx.k, s);
  sm.set_scratch(ctx.thread_work(sm.scratch_bytes()));
  const int64_t n_units = s.n_tok * s.n_batch * s.n_head_kv * s.n_chunks;
  // Interleaved: under a causal mask later tokens cost more, so contiguous ranges would not balance.
  for (int64_t u = ctx.ith; u < n_units; u += ctx.nth) {
    const int64_t c = u % s.n_chunks;
    const int64_t kv_head = (u / s.n_chunks) % s.n_head_kv;
    const int64_t tok = u / (s.n_chunks * s.n_head_kv) % s.n_tok;
    const int64_t b = u / (s.n_chunks * s.n_head_kv * s.n_tok);
    const int64_t h0 = kv_head * s.group + c * s.chunk;
    const int64_t h1 = std::min(h0 + s.chunk, (kv_head + 1) * s.group);
    if (h0 < h1) compute_unit(node, sm, tok, b, kv_head, h0, h1, s.n_kv);
  }
}

bool attn_supported(const Tensor& node, const Kernels& k) {
  return OnlineSoftmax::supported(k, node.src[1]->type, node.src[2]->type);
}

}  // namespace

OpImpl impl_flash_attn_ext() { return {compute_flash_attn, attn_work_size, attn_supported}; }

}  // namespace hart::cpu
