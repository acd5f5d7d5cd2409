#include "model/key_shift.h"

#include <string>

#include "common/error.h"

namespace hart {
namespace {

template <class T>
Tensor* input(Context& c, std::vector<T>& data, Type type, const char* name) {
  const int64_t ne[1] = {int64_t(data.size())};
  Tensor* t = c.new_leaf(type, ne, data.data());
  t->flags |= kFlagInput;
  t->set_name("%s", name);
  return t;
}

}  // namespace

std::vector<std::optional<KeyRope>> key_ropes(const ForwardGraph& fg) {
  std::vector<std::optional<KeyRope>> out(fg.key_rope.size());
  for (size_t il = 0; il < out.size(); il++) {
    const Tensor* r = fg.key_rope[il];
    if (!r) continue;
    Tensor* ff = r->src[2];
    KeyRope k{RopeMode(r->params[0]), r->params[1], r->param_f32(2), r->param_f32(3), ff, r->ne[0], r->ne[1], {}};
    const std::string layer = "layer " + std::to_string(il);
    if (r->param_f32(5) != 0.0f) k.unrepeatable = layer + "'s keys are YaRN-rotated, which a shift cannot repeat";
    if (ff && !(ff->op == Op::NONE && (ff->flags & kFlagWeight)))
      k.unrepeatable = layer + "'s RoPE frequency factors are computed, not a weight";
    out[il] = std::move(k);
  }
  return out;
}

void check_repeatable(std::span<const std::optional<KeyRope>> ropes) {
  for (const auto& r : ropes)
    if (r && !r->unrepeatable.empty()) throw Error("context shift: " + r->unrepeatable);
}

bool build_key_shift(KeyShiftGraph& g, const kv::SequenceStore& store, std::span<const std::optional<KeyRope>> ropes,
                     const std::vector<int32_t> (&moved)[kv::kPools], int delta) {
  // Per pool, the moved slots (as GET_ROWS and SET_ROWS take them) and the turn of each.
  Tensor *rows[kv::kPools] = {}, *slots[kv::kPools] = {}, *pos[kv::kPools] = {};
  for (int p = 0; p < kv::kPools; p++) {
    if (moved[p].empty()) continue;
    rows[p] = input(g.ctx, g.i32.emplace_back(moved[p]), Type::I32, "k_shift_rows");
    slots[p] = input(g.ctx, g.i64.emplace_back(moved[p].begin(), moved[p].end()), Type::I64, "k_shift_slots");
    pos[p] = input(g.ctx, g.i32.emplace_back(moved[p].size(), delta), Type::I32, "k_shift");
  }
  std::vector<Tensor*> writes;
  for (size_t il = 0; il < ropes.size(); il++) {
    const int p = int(store.layout().kv[il].pool);
    if (!ropes[il] || !rows[p]) continue;
    const KeyRope& r = *ropes[il];
    Tensor* cache = store.kv().k(int(il));
    if (r.head_dim * r.n_head_kv != cache->ne[0])
      throw Error("context shift: layer " + std::to_string(il) + "'s rotated keys do not make its cache rows");
    const int64_t m = rows[p]->ne[0];
    Tensor* k = reshape(g.ctx, get_rows(g.ctx, cache, rows[p]), {r.head_dim, r.n_head_kv, m});
    Tensor* turned = rope(g.ctx, k, pos[p], r.freq_factors, r.mode, r.n_dims, r.freq_base, r.freq_scale, 1.0f);
    Tensor* w = set_rows(g.ctx, cache, reshape(g.ctx, turned, {cache->ne[0], m}), slots[p]);
    w->set_name("k_shifted-%zu", il);
    writes.push_back(w);
  }
  if (writes.empty()) return false;
  g.graph = build_graph(writes);
  return true;
}

}  // namespace hart
