#include "kv/slot_pool.h"

#include <string>

#include "common/error.h"

namespace hart::kv {

SlotPool::SlotPool(int32_t size) : size_(size), is_free_(size_t(size), true) {
  if (size <= 0) throw Error("the KV pool needs at least one slot, not " + std::to_string(size));
  free_.reserve(size_t(size));
  for (int32_t s = size - 1; s >= 0; s--) free_.push_back(s);  // slot 0 handed out first
}

bool SlotPool::alloc(int32_t n, std::vector<int32_t>& out) {
  if (n < 0 || n > n_free()) return false;
  for (int32_t i = 0; i < n; i++) {
    const int32_t s = free_.back();
    free_.pop_back();
    is_free_[size_t(s)] = false;
    out.push_back(s);
  }
  return true;
}

void SlotPool::free(std::span<const int32_t> slots) {
  for (int32_t s : slots) {
    if (s < 0 || s >= size_) throw Error("KV slot " + std::to_string(s) + " is outside the pool of " + std::to_string(size_));
    if (is_free_[size_t(s)]) throw Error("KV slot " + std::to_string(s) + " is freed twice");
    is_free_[size_t(s)] = true;
    free_.push_back(s);
  }
}

}  // namespace hart::kv
