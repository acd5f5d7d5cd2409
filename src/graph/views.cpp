// Views: tensors that reinterpret existing memory (no computation).
#include <string>

#include "graph/builder.h"

namespace hart {

using detail::fail;

Tensor* reshape(Context& c, Tensor* a, std::initializer_list<int64_t> ne) {
  if (!a->is_contiguous()) fail(Op::RESHAPE, "source " + detail::describe(a) + " is not contiguous");
  if (!(ne.size() != 0 && ne.size() <= size_t(kMaxDims))) fail(Op::RESHAPE, "1 to 4 dimensions allowed");
  int64_t shape[kMaxDims] = {1, 1, 1, 1};
  int64_t n = 1;
  int i = 0;
  for (int64_t d : ne) n *= (shape[i++] = d);
  if (n != a->nelements())
    fail(Op::RESHAPE, std::to_string(n) + " elements requested from " + detail::describe(a));
  Tensor probe;
  probe.type = a->type;
  for (int d = 0; d < kMaxDims; d++) probe.ne[d] = shape[d];
  set_contiguous_strides(probe);
  return detail::new_view(c, Op::RESHAPE, a, shape, probe.nb, 0);
}

Tensor* view(Context& c, Tensor* a, std::initializer_list<int64_t> ne, std::initializer_list<size_t> nb,
             size_t offset) {
  if (!(ne.size() != 0 && ne.size() <= size_t(kMaxDims))) fail(Op::VIEW, "1 to 4 dimensions allowed");
  if (nb.size() + 1 != ne.size())
    fail(Op::VIEW, std::to_string(ne.size()) + " sizes need " + std::to_string(ne.size() - 1) +
                       " strides (nb[0] is implied by the type), got " + std::to_string(nb.size()));
  int64_t shape[kMaxDims] = {1, 1, 1, 1};
  size_t strides[kMaxDims] = {type_info(a->type).type_size, 0, 0, 0};
  int i = 0;
  for (int64_t d : ne) shape[i++] = d;
  i = 1;
  for (size_t s : nb) strides[i++] = s;
  const int64_t bs = type_info(a->type).block_size;
  for (; i < kMaxDims; i++) strides[i] = strides[i - 1] * size_t(i == 1 ? shape[0] / bs : shape[i - 1]);
  return detail::new_view(c, Op::VIEW, a, shape, strides, offset);
}

Tensor* permute(Context& c, Tensor* a, int ax0, int ax1, int ax2, int ax3) {
  const int axes[kMaxDims] = {ax0, ax1, ax2, ax3};
  int seen = 0;
  for (int ax : axes) {
    if (!(ax >= 0 && ax < kMaxDims)) fail(Op::PERMUTE, "axis " + std::to_string(ax) + " out of range");
    seen |= 1 << ax;
  }
  if (seen != 0xf) fail(Op::PERMUTE, "axes must be a permutation of 0, 1, 2, 3");
  // As ggml_permute: source dimension i becomes dimension axes[i].
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  for (int i = 0; i < kMaxDims; i++) {
    ne[axes[i]] = a->ne[i];
    nb[axes[i]] = a->nb[i];
  }
  Tensor* t = detail::new_view(c, Op::PERMUTE, a, ne, nb, 0);
  for (int i = 0; i < kMaxDims; i++) t->params[i] = axes[i];
  return t;
}

Tensor* transpose(Context& c, Tensor* a) {
  const int64_t ne[kMaxDims] = {a->ne[1], a->ne[0], a->ne[2], a->ne[3]};
  const size_t nb[kMaxDims] = {a->nb[1], a->nb[0], a->nb[2], a->nb[3]};
  return detail::new_view(c, Op::TRANSPOSE, a, ne, nb, 0);
}

bool is_view_op(Op op) { return op == Op::RESHAPE || op == Op::VIEW || op == Op::PERMUTE || op == Op::TRANSPOSE; }

Tensor* producer(Tensor* t) {
  while (is_view_op(t->op)) t = t->src[0];
  return t;
}

}  // namespace hart
