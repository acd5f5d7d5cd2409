#include <string>

#include "common/error.h"
#include "graph/graph.h"

namespace hart {

Tensor* Context::new_tensor(Type type, std::initializer_list<int64_t> ne) {
  return new_tensor(type, std::span<const int64_t>(ne.begin(), ne.size()));
}

Tensor* Context::new_tensor(Type type, std::span<const int64_t> ne) {
  if (ne.empty() || ne.size() > size_t(kMaxDims))
    throw Error("new_tensor: " + std::to_string(ne.size()) + " dimensions (1 to 4 allowed)");
  const TypeInfo& ti = type_info(type);
  Tensor& t = tensors_.emplace_back();
  t.type = type;
  for (size_t i = 0; i < ne.size(); i++) {
    if (ne[i] < 1) throw Error("new_tensor: dimension " + std::to_string(i) + " is " + std::to_string(ne[i]));
    t.ne[i] = ne[i];
  }
  if (t.ne[0] % ti.block_size != 0)
    throw Error("new_tensor: row of " + std::to_string(t.ne[0]) + " " + std::string(ti.name) +
                " elements is not a whole number of blocks of " + std::to_string(ti.block_size));
  set_contiguous_strides(t);
  return &t;
}

Tensor* Context::new_leaf(Type type, std::span<const int64_t> ne, void* data) {
  Tensor* t = new_tensor(type, ne);
  t->data = data;
  return t;
}

}  // namespace hart
