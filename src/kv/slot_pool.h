// The free list of a pool of slots: token slots of a KV pool (the K and V tensors themselves are
// a KvCache's rows, src/kv/kv_cache.h) or recurrent state cells; this decides which belong to no one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hart::kv {

class SlotPool {
 public:
  explicit SlotPool(int32_t size);

  int32_t size() const { return size_; }
  int32_t n_free() const { return int32_t(free_.size()); }
  // Appends n slots to `out`; false (and nothing taken) when fewer than n are free.
  bool alloc(int32_t n, std::vector<int32_t>& out);
  // Throws hart::Error for a slot out of range or already free (a double free is a bug that
  // would let two sequences write the same row).
  void free(std::span<const int32_t> slots);

 private:
  int32_t size_;
  std::vector<int32_t> free_;   // a stack: recently freed slots are reused first
  std::vector<bool> is_free_;
};

}  // namespace hart::kv
