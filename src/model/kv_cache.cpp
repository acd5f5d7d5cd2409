#include "model/kv_cache.h"

#include <cstring>

#include "common/error.h"
#include "common/memory_budget.h"

namespace hart {

KvCache::KvCache(const HParams& hp, int n_ctx, Type type) : n_ctx_(n_ctx), type_(type) {
  if (type != Type::F32 && type != Type::F16)
    throw Error("KV cache type must be f32 or f16, not " + std::string(type_name(type)));
  const size_t per_tensor = row_size(type, hp.n_embd_kv()) * size_t(n_ctx);
  bytes_ = per_tensor * 2 * size_t(hp.n_layer);
  require_memory(bytes_, "a context of " + std::to_string(n_ctx) + " tokens (KV cache)");
  mem_.reset(new (std::nothrow) uint8_t[bytes_]);
  if (!mem_) throw Error("cannot allocate " + std::to_string(bytes_ >> 20) + " MiB for the KV cache");
  std::memset(mem_.get(), 0, bytes_);
  const int64_t ne[2] = {hp.n_embd_kv(), n_ctx};
  for (int il = 0; il < hp.n_layer; il++) {
    k_.push_back(ctx_.new_leaf(type, ne, mem_.get() + (2 * il) * per_tensor));
    v_.push_back(ctx_.new_leaf(type, ne, mem_.get() + (2 * il + 1) * per_tensor));
    k_.back()->flags |= kFlagState;
    v_.back()->flags |= kFlagState;
    k_.back()->set_name("cache_k_l%d", il);
    v_.back()->set_name("cache_v_l%d", il);
  }
}

}  // namespace hart
