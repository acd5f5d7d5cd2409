#include "graph/builder.h"

#include "common/error.h"

namespace hart::detail {

std::string describe(const Tensor* t) {
  std::string s = "[";
  for (int i = 0; i < kMaxDims; i++) s += std::to_string(t->ne[i]) + (i + 1 < kMaxDims ? ", " : "] ");
  s += std::string(type_name(t->type));
  if (t->name[0]) s += std::string(" '") + t->name + "'";
  return s;
}

void fail(Op op, const std::string& what) { throw Error(std::string(op_name(op)) + ": " + what); }

void check_type(const Tensor* t, Type type, Op op, const char* role) {
  if (t->type != type)
    fail(op, std::string(role) + " must be " + std::string(type_name(type)) + ", got " + describe(t));
}

void check_rows_contiguous(const Tensor* t, Op op, const char* role) {
  if (t->nb[0] != type_info(t->type).type_size)
    fail(op, std::string(role) + " " + describe(t) + " has strided rows (nb[0] = " +
                 std::to_string(t->nb[0]) + "); make it contiguous with cont() first");
}

Tensor* new_node(Context& c, Op op, Type type, const int64_t (&ne)[kMaxDims],
                 std::initializer_list<Tensor*> srcs) {
  Tensor* t = c.new_tensor(type, std::span<const int64_t>(ne, kMaxDims));
  t->op = op;
  int i = 0;
  for (Tensor* s : srcs) t->src[i++] = s;
  return t;
}

Tensor* new_view(Context& c, Op op, Tensor* a, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
                 size_t offset) {
  Tensor* t = c.new_tensor(a->type, std::span<const int64_t>(ne, kMaxDims));
  for (int i = 0; i < kMaxDims; i++) t->nb[i] = nb[i];
  t->op = op;
  t->src[0] = a;
  // Views always point at the tensor that owns the memory, never at another view.
  t->view_src = a->view_src ? a->view_src : a;
  t->view_offs = a->view_offs + offset;
  const size_t end = t->view_offs + t->nbytes();
  if (!(end <= t->view_src->nbytes()))
    fail(op, "view " + describe(t) + " at byte " + std::to_string(t->view_offs) + " ends at byte " +
                 std::to_string(end) + ", past the " + std::to_string(t->view_src->nbytes()) + " bytes of " +
                 describe(t->view_src));
  if (t->view_src->data) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
  return t;
}

}  // namespace hart::detail
