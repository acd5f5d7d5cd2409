// Helpers shared by the builder functions (views.cpp, ops.cpp): node creation and the
// shape/type checks whose failures name the op and the offending shapes.
#pragma once

#include <string>

#include "graph/graph.h"

namespace hart::detail {

// "[4096, 7, 1, 1] f16"
std::string describe(const Tensor* t);

// Throws hart::Error("<op>: <what>"). Callers test first (`if (!ok) fail(...)`) so the message is
// only built for a failure: graphs are rebuilt every decode step.
[[noreturn]] void fail(Op op, const std::string& what);
void check_type(const Tensor* t, Type type, Op op, const char* role);
// Elements along dim 0 are adjacent (nb[0] is the element / block size), as row kernels need.
void check_rows_contiguous(const Tensor* t, Op op, const char* role);

// A new contiguous tensor computed by `op` from srcs.
Tensor* new_node(Context& c, Op op, Type type, const int64_t (&ne)[kMaxDims],
                 std::initializer_list<Tensor*> srcs);

// A view of a's memory (shape ne, strides nb, byte offset into a) produced by `op`; src[0] = a.
Tensor* new_view(Context& c, Op op, Tensor* a, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
                 size_t offset);

}  // namespace hart::detail
