#include "kv/kv_cache.h"

#include <cstring>

#include "common/error.h"
#include "common/memory_budget.h"

namespace hart::kv {

KvCache::KvCache(std::span<const KvLayer> layers, int n_full, int n_window, Type type)
    : type_(type), n_slots_{n_full, n_window} {
  if (type != Type::F32 && type != Type::F16)
    throw Error("KV cache type must be f32 or f16, not " + std::string(type_name(type)));
  for (const KvLayer& l : layers)
    if (l.row > 0) bytes_ += 2 * row_size(type, l.row) * size_t(n_slots(l.pool));
  if (bytes_ > 0) {
    require_memory(bytes_, "a context of " + std::to_string(n_full) + " tokens (KV cache)");
    mem_.reset(new (std::nothrow) uint8_t[bytes_]);
    if (!mem_) throw Error("cannot allocate " + std::to_string(bytes_ >> 20) + " MiB for the KV cache");
    std::memset(mem_.get(), 0, bytes_);
  }
  uint8_t* p = mem_.get();
  for (size_t il = 0; il < layers.size(); il++) {
    const KvLayer& l = layers[il];
    if (l.row <= 0) {
      k_.push_back(nullptr);
      v_.push_back(nullptr);
      continue;
    }
    if (n_slots(l.pool) <= 0) throw Error("layer " + std::to_string(il) + " has a KV cache of no slots");
    const int64_t ne[2] = {l.row, n_slots(l.pool)};
    const size_t per_tensor = row_size(type, l.row) * size_t(ne[1]);
    for (auto* list : {&k_, &v_}) {
      Tensor* t = ctx_.new_leaf(type, ne, p);
      t->flags |= kFlagState;
      t->set_name("cache_%s_l%zu", list == &k_ ? "k" : "v", il);
      list->push_back(t);
      p += per_tensor;
    }
  }
}

}  // namespace hart::kv
