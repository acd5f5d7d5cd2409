// The K and V rows of every attention layer that owns a cache, in F16 (default, as llama.cpp)
// or F32. Rows live in one of two slot pools: FULL (a slot per position of every sequence) and
// WINDOW (sliding-window layers: only the positions still inside the window). Which sequence
// owns which slot is decided elsewhere (SequenceStore); this only holds the memory.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "graph/graph.h"

namespace hart::kv {

enum class Pool : uint8_t { FULL, WINDOW };
constexpr int kPools = 2;

struct KvLayer {
  int64_t row = 0;  // K (and V) values per position; 0: the layer keeps no cache of its own
  Pool pool = Pool::FULL;
};

class KvCache {
 public:
  KvCache(std::span<const KvLayer> layers, int n_full, int n_window, Type type);

  Type type() const { return type_; }
  size_t bytes() const { return bytes_; }
  int n_slots(Pool p) const { return n_slots_[int(p)]; }
  // Leaf tensors (row, n_slots of the layer's pool) over the cache memory of layer il; nullptr
  // for a layer without a cache of its own.
  Tensor* k(int il) const { return k_[size_t(il)]; }
  Tensor* v(int il) const { return v_[size_t(il)]; }

 private:
  Type type_;
  int n_slots_[kPools];
  size_t bytes_ = 0;
  Context ctx_;
  std::unique_ptr<uint8_t[]> mem_;
  std::vector<Tensor*> k_, v_;
};

}  // namespace hart::kv
