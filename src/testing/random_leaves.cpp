#include "testing/random_leaves.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "quant/random_blocks.h"

namespace hart::testing {

std::byte* RandomLeaves::bytes(size_t n) {
  // Unfilled leaves stay untouched pages: a support check may "allocate" gigabytes.
  memory_.push_back(fill_ ? std::make_unique<std::byte[]>(n + 64) : std::make_unique_for_overwrite<std::byte[]>(n + 64));
  std::byte* p = memory_.back().get();
  return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
}

Tensor* RandomLeaves::random(Type type, std::initializer_list<int64_t> ne, float lo, float hi) {
  return random(type, std::span<const int64_t>(ne.begin(), ne.size()), lo, hi);
}

Tensor* RandomLeaves::random(Type type, std::span<const int64_t> ne, float lo, float hi) {
  Tensor* t = ctx.new_tensor(type, ne);
  t->data = bytes(t->nbytes());
  const int64_t n = t->nelements();
  if (!fill_) return t;
  if (type == Type::I32 || type == Type::I64) {
    std::uniform_int_distribution<int64_t> dist(int64_t(lo), int64_t(hi) - 1);
    for (int64_t i = 0; i < n; i++) {
      if (type == Type::I32) static_cast<int32_t*>(t->data)[i] = int32_t(dist(rng_));
      else static_cast<int64_t*>(t->data)[i] = dist(rng_);
    }
    return t;
  }
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> f(static_cast<size_t>(n));
  for (float& x : f) x = dist(rng_);
  quantize_test_row(type, f.data(), t->data, n);
  return t;
}

void RandomLeaves::allocate(const Graph& g) {
  for (Tensor* t : g.nodes)
    if (!t->view_src && !t->data) t->data = bytes(t->nbytes());
  for (Tensor* t : g.nodes)
    if (t->view_src) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
}

void copy_leaf_values(const Graph& from, const Graph& to) {
  const auto copy = [](const std::vector<Tensor*>& src, const std::vector<Tensor*>& dst) {
    if (src.size() != dst.size()) throw Error("copy_leaf_values: the two builds have different graphs");
    for (size_t i = 0; i < src.size(); i++) {
      const Tensor* f = src[i];
      Tensor* t = dst[i];
      const bool same = f->type == t->type && std::equal(std::begin(f->ne), std::end(f->ne), std::begin(t->ne)) &&
                        bool(f->data) == bool(t->data) && bool(f->view_src) == bool(t->view_src);
      if (!same) throw Error("copy_leaf_values: the two builds differ at tensor " + std::to_string(i));
      if (f->data && !f->view_src) std::memcpy(t->data, f->data, f->nbytes());
    }
  };
  copy(from.leafs, to.leafs);
  copy(from.nodes, to.nodes);
}

}  // namespace hart::testing
