// PAGED_ATTN: tokens of many sequences attend over one pool of KV slots, each token over the
// slot list its index entry names (see paged_attn() in graph.h). One kernel serves both shapes
// a serving step has:
//  - extend (a prefill chunk): consecutive tokens listing the same slot list form a tile of up
//    to kTile tokens; a K/V row is converted once and used by every token and query head of the
//    tile (GQA), with an online softmax per (token, head) (online_softmax.h): no score matrix;
//  - decode (a lone token with a long list, few tokens in the batch): the list is split into
//    parts computed by different threads, each keeping its unnormalised output, max and sum
//    (FlashDecoding); after a barrier the parts are merged exactly.
// Work units are (tile, KV head, part), dealt to threads round-robin.
#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/online_softmax.h"

namespace hart::cpu {
namespace {

constexpr int64_t kTile = 16;          // query tokens sharing one pass over the K/V rows
constexpr int64_t kMinPartSlots = 64;  // a decode split never gets fewer slots than this
constexpr int64_t kMaxParts = 16;

struct Shape {
  int64_t d, dv, n_head, n_head_kv, group, n_tok, n_slots, n_index;
  int64_t parts;  // max parts a lone token's list is split into
  int64_t nth;    // threads the units are dealt to
};

Shape shape_of(const Tensor& node, int nth) {
  const Tensor& q = *node.src[0];
  const Tensor& kt = *node.src[1];
  Shape s{};
  s.d = q.ne[0];
  s.dv = node.src[2]->ne[0];
  s.n_head = q.ne[1];
  s.n_tok = q.ne[2];
  s.n_head_kv = kt.ne[1];
  s.group = s.n_head / s.n_head_kv;
  s.n_slots = kt.ne[2];
  s.n_index = node.src[3]->ne[0];
  s.nth = nth;
  // Split lists only when tokens x KV heads cannot keep every thread busy.
  const int64_t units = s.n_tok * s.n_head_kv;
  s.parts = std::clamp<int64_t>((4 * nth + units - 1) / units, 1, kMaxParts);
  return s;
}

// One unit's softmax state: the tile's tokens x the KV head's query heads.
OnlineSoftmax softmax_of(const Tensor& node, const Kernels& k, const Shape& s) {
  return OnlineSoftmax(k, node.src[1]->type, node.src[2]->type, kTile * s.group, s.d, s.dv);
}

// Split results, shared by all threads: per (token, head, part) dv outputs, then max and sum.
size_t part_floats(const Shape& s) { return size_t(s.dv + 2); }
size_t parts_bytes(const Shape& s) {
  return s.parts > 1 ? size_t(s.n_tok * s.n_head * s.parts) * part_floats(s) * sizeof(float) : 0;
}

size_t paged_work_size(const Tensor& node, const Kernels& k, int nth) {
  const Shape s = shape_of(node, nth);
  return size_t(nth) * align_up(softmax_of(node, k, s).scratch_bytes()) + parts_bytes(s);
}

float* part_of(const Shape& s, std::byte* parts, int64_t tok, int64_t head, int64_t part) {
  return reinterpret_cast<float*>(parts) + size_t((tok * s.n_head + head) * s.parts + part) * part_floats(s);
}

// The slot list of token t, or an empty one (reported) when its index entry is out of range.
struct List {
  int64_t off = 0, count = 0;
};

List list_of(const Shape& s, const int32_t* index, int64_t t) {
  const int64_t off = index[2 * t], count = index[2 * t + 1];
  if (off < 0 || count < 0 || off + count > s.n_index) return {};
  return {off, count};
}

// Parts a tile of n tokens whose longest list has `count` slots is split into: at most
// s.parts and none under kMinPartSlots slots, and of those the count whose units (KV head,
// part) dealt round-robin give the busiest thread the least of a list, ceil(units / nth) parts
// of 1/p each (the fewer parts on a tie). One thread: no split. Two threads and 3 KV heads
// (SmolLM2): 2 parts, 3 units each, where 3 parts left one thread 5 of 9.
int64_t parts_for(const Shape& s, int64_t n, int64_t count) {
  if (n > 1) return 1;
  const int64_t most = std::clamp<int64_t>(count / kMinPartSlots, 1, s.parts);
  const int64_t lists = s.n_tok * s.n_head_kv;  // the units before any split
  const auto busiest = [&](int64_t p) { return (lists * p + s.nth - 1) / s.nth; };  // parts of 1/p
  int64_t best = 1;
  for (int64_t p = 2; p <= most; p++)
    if (busiest(p) * best < busiest(best) * p) best = p;
  return best;
}

// Calls f(t0, t1, parts) for each tile: tokens [t0, t1) that list the same slots.
template <class F>
void for_each_tile(const Shape& s, const int32_t* index, F f) {
  for (int64_t t0 = 0; t0 < s.n_tok;) {
    int64_t t1 = t0 + 1, count = list_of(s, index, t0).count;
    while (t1 < s.n_tok && t1 - t0 < kTile && index[2 * t1] == index[2 * t0]) {
      count = std::max(count, list_of(s, index, t1).count);
      t1++;
    }
    f(t0, t1, parts_for(s, t1 - t0, count));
    t0 = t1;
  }
}

struct Unit {
  int64_t t0, t1, kv_head, part, parts;
};

// Online softmax of the tile's tokens x the KV head's query heads over the unit's share of
// the slot list. Results go to the output (one part) or to the part buffer.
void compute_unit(const Tensor& node, const OpContext& ctx, const Shape& s, OnlineSoftmax& sm, std::byte* parts,
                  const Unit& u) {
  const Tensor& q = *node.src[0];
  const Tensor& kt = *node.src[1];
  const Tensor& v = *node.src[2];
  const int32_t* index = static_cast<const int32_t*>(node.src[3]->data);
  const float scale = node.param_f32(0);
  const int64_t h0 = u.kv_head * s.group;

  int64_t count = 0;
  for (int64_t t = u.t0; t < u.t1; t++) {
    count = std::max(count, list_of(s, index, t).count);
    for (int64_t h = 0; h < s.group; h++) sm.start((t - u.t0) * s.group + h, frow(q, {h0 + h, t, 0}));
  }

  const int64_t off = index[2 * u.t0];  // shared by the tile; counts are 0 when it is out of range
  const int64_t j0 = count * u.part / u.parts, j1 = count * (u.part + 1) / u.parts;
  const char* krows[OnlineSoftmax::kBlock];
  const char* vrows[OnlineSoftmax::kBlock];
  int64_t seen[kTile];  // per token of the tile: how many of the block's slots it sees
  for (int64_t b0 = j0; b0 < j1; b0 += OnlineSoftmax::kBlock) {
    const int64_t n = std::min(OnlineSoftmax::kBlock, j1 - b0);
    int64_t valid = 0;  // slots outside the pool are reported and left out
    for (int64_t j = b0; j < b0 + n; j++) {
      const int64_t slot = index[off + j];
      if (slot < 0 || slot >= s.n_slots) {
        ctx.errors.fail("PAGED_ATTN: slot " + std::to_string(slot) + " is outside the pool of " +
                        std::to_string(s.n_slots));
        continue;
      }
      krows[valid] = row_ptr(kt, u.kv_head, slot, 0);
      vrows[valid++] = row_ptr(v, u.kv_head, slot, 0);
    }
    if (valid < n) continue;  // the op fails; its output is not read
    // Causal: a token sees the list up to its own count, so within a block a prefix of it.
    for (int64_t t = u.t0; t < u.t1; t++) seen[t - u.t0] = std::clamp<int64_t>(list_of(s, index, t).count - b0, 0, n);
    sm.add(0, (u.t1 - u.t0) * s.group, n, krows, vrows, scale, nullptr, seen, s.group);
  }

  for (int64_t t = u.t0; t < u.t1; t++) {
    for (int64_t h = 0; h < s.group; h++) {
      const int64_t r = (t - u.t0) * s.group + h;
      if (u.parts == 1) {
        sm.finish(r, reinterpret_cast<float*>(row_ptr(node, h0 + h, t, 0)));
      } else {
        float* p = part_of(s, parts, t, h0 + h, u.part);
        std::copy(sm.acc(r), sm.acc(r) + s.dv, p);
        p[s.dv] = sm.max(r);
        p[s.dv + 1] = sm.sum(r);
      }
    }
  }
}

// out = sum_p e^(m_p - M) acc_p / sum_p e^(m_p - M) l_p with M the largest m_p.
void merge_parts(const Tensor& node, const OpContext& ctx, const Shape& s, std::byte* parts, int64_t t,
                 int64_t n_parts) {
  for (int64_t h = 0; h < s.n_head; h++) {
    float M = -INFINITY;
    for (int64_t p = 0; p < n_parts; p++) M = std::max(M, part_of(s, parts, t, h, p)[s.dv]);
    float* out = reinterpret_cast<float*>(row_ptr(node, h, t, 0));
    std::fill(out, out + s.dv, 0.0f);
    float l = 0.0f;
    if (M != -INFINITY) {
      for (int64_t p = 0; p < n_parts; p++) {
        const float* part = part_of(s, parts, t, h, p);
        const float w = std::exp(part[s.dv] - M);
        l += w * part[s.dv + 1];
        ctx.k.axpy(s.dv, w, part, out);
      }
    }
    ctx.k.scale(s.dv, out, l > 0.0f ? 1.0f / l : 0.0f, out);
  }
}

void compute_paged_attn(const Tensor& node, const OpContext& ctx) {
  const Shape s = shape_of(node, ctx.nth);
  OnlineSoftmax sm = softmax_of(node, ctx.k, s);
  sm.set_scratch(ctx.thread_work(sm.scratch_bytes()));
  std::byte* parts = ctx.work + size_t(ctx.nth) * align_up(sm.scratch_bytes());
  const int32_t* index = static_cast<const int32_t*>(node.src[3]->data);
  if (ctx.ith == 0)
    for (int64_t t = 0; t < s.n_tok; t++) {
      const int64_t off = index[2 * t], count = index[2 * t + 1];
      if (off < 0 || count < 0 || off + count > s.n_index)
        ctx.errors.fail("PAGED_ATTN: token " + std::to_string(t) + " lists index entries [" + std::to_string(off) +
                        ", +" + std::to_string(count) + ") outside the index of " + std::to_string(s.n_index));
    }

  int64_t unit = 0;
  bool split = false;
  for_each_tile(s, index, [&](int64_t t0, int64_t t1, int64_t n_parts) {
    split |= n_parts > 1;
    for (int64_t kv_head = 0; kv_head < s.n_head_kv; kv_head++)
      for (int64_t part = 0; part < n_parts; part++, unit++)
        if (unit % ctx.nth == ctx.ith) compute_unit(node, ctx, s, sm, parts, {t0, t1, kv_head, part, n_parts});
  });
  if (!split) return;  // every thread sees the same tiles, so all agree on skipping the barrier
  ctx.pool.barrier();
  int64_t tile = 0;
  for_each_tile(s, index, [&](int64_t t0, int64_t, int64_t n_parts) {
    if (n_parts > 1 && tile++ % ctx.nth == ctx.ith) merge_parts(node, ctx, s, parts, t0, n_parts);
  });
}

bool paged_supported(const Tensor& node, const Kernels& k) {
  return OnlineSoftmax::supported(k, node.src[1]->type, node.src[2]->type);
}

}  // namespace

OpImpl impl_paged_attn() { return {compute_paged_attn, paged_work_size, paged_supported, always_team}; }

}  // namespace hart::cpu
