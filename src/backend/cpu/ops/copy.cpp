// CPY (src -> dst with type conversion) and CONT (src -> a contiguous copy). Both write the
// node's own memory: CPY's node is a view of dst, CONT's node is the new tensor. And CONCAT.
#include <cstring>
#include <numeric>

#include "backend/cpu/ops/ops.h"
#include "common/fp16.h"

namespace hart::cpu {
namespace {

bool same_shape(const Tensor& a, const Tensor& b) {
  return a.ne[0] == b.ne[0] && a.ne[1] == b.ne[1] && a.ne[2] == b.ne[2] && a.ne[3] == b.ne[3];
}

// Row by row works when shapes match and rows are contiguous; the builders only allow the
// element path otherwise, and only for plain (non-block) types.
bool by_rows(const Tensor& src, const Tensor& dst) {
  return same_shape(src, dst) && src.nb[0] == type_info(src.type).type_size &&
         dst.nb[0] == type_info(dst.type).type_size;
}

bool is_float(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }

float load(Type t, const char* p) {
  switch (t) {
    case Type::F16: return fp16_to_f32(*reinterpret_cast<const fp16_t*>(p));
    case Type::BF16: return bf16_to_f32(*reinterpret_cast<const bf16_t*>(p));
    default: return *reinterpret_cast<const float*>(p);
  }
}

void store(Type t, char* p, float v) {
  switch (t) {
    case Type::F16: *reinterpret_cast<fp16_t*>(p) = f32_to_fp16(v); break;
    case Type::BF16: *reinterpret_cast<bf16_t*>(p) = f32_to_bf16(v); break;
    default: *reinterpret_cast<float*>(p) = v; break;
  }
}

size_t copy_work_size(const Tensor& node, const Kernels&, int nth) {
  // A row of floats between two conversions (neither side F32).
  const Tensor& src = *node.src[0];
  if (!by_rows(src, node) || src.type == node.type || src.type == Type::F32 || node.type == Type::F32) return 0;
  return size_t(nth) * align_up(size_t(node.ne[0]) * sizeof(float));
}

void copy_rows(const Tensor& src, const Tensor& dst, const OpContext& ctx) {
  const int64_t n = dst.ne[0];
  auto* tmp = reinterpret_cast<float*>(ctx.thread_work(size_t(n) * sizeof(float)));
  const auto [begin, end] = ctx.range(dst.nrows());
  for (int64_t r = begin; r < end; r++) {
    const RowIndex ri = row_index(dst, r);
    const char* s = row_ptr(src, ri);
    char* d = row_ptr(dst, ri);
    if (src.type == dst.type) {
      std::memcpy(d, s, dst.row_bytes());
    } else if (src.type == Type::F32) {
      ctx.k.from_f32[size_t(dst.type)](reinterpret_cast<const float*>(s), d, n);
    } else if (dst.type == Type::F32) {
      ctx.k.to_f32[size_t(src.type)](s, reinterpret_cast<float*>(d), n);
    } else {
      ctx.k.to_f32[size_t(src.type)](s, tmp, n);
      ctx.k.from_f32[size_t(dst.type)](tmp, d, n);
    }
  }
}

// Element i of the flattened order (dim 0 fastest) of t.
char* element(const Tensor& t, int64_t i) {
  const int64_t i0 = i % t.ne[0];
  i /= t.ne[0];
  const int64_t i1 = i % t.ne[1];
  i /= t.ne[1];
  const int64_t i2 = i % t.ne[2];
  return row_ptr(t, i1, i2, i / t.ne[2]) + i0 * t.nb[0];
}

// How many leading elements (flattened order, dim 0 fastest) of t lie back to back in memory;
// dimensions of size 1 are never stepped over, so their strides do not matter (a transposed
// single column is one run).
int64_t contiguous_run(const Tensor& t) {
  const size_t size = type_info(t.type).type_size;
  int64_t run = 1;
  for (int i = 0; i < kMaxDims; i++) {
    if (t.ne[i] == 1) continue;
    if (t.nb[i] != size * size_t(run)) break;
    run *= t.ne[i];
  }
  return run;
}

// Runs of g elements, g dividing both sides' contiguous runs (both are products of leading
// sizes, so their gcd is a whole number of each side's rows): one memcpy or conversion loop per
// run instead of an address computation per element.
void copy_elements(const Tensor& src, const Tensor& dst, const OpContext& ctx) {
  const size_t size_s = type_info(src.type).type_size, size_d = type_info(dst.type).type_size;
  const int64_t g = std::gcd(contiguous_run(src), contiguous_run(dst));
  const auto [begin, end] = ctx.range(src.nelements() / g);
  for (int64_t c = begin; c < end; c++) {
    const char* s = element(src, c * g);
    char* d = element(dst, c * g);
    if (src.type == dst.type) {
      std::memcpy(d, s, size_t(g) * size_s);
      continue;
    }
    for (int64_t i = 0; i < g; i++) store(dst.type, d + size_t(i) * size_d, load(src.type, s + size_t(i) * size_s));
  }
}

void compute_copy(const Tensor& node, const OpContext& ctx) {
  const Tensor& src = *node.src[0];
  if (by_rows(src, node)) copy_rows(src, node, ctx);
  else copy_elements(src, node, ctx);
}

bool copy_supported(const Tensor& node, const Kernels& k) {
  const Type s = node.src[0]->type, d = node.type;
  if (s == d) return true;
  if (!by_rows(*node.src[0], node)) return is_float(s) && is_float(d);
  return (s == Type::F32 || k.to_f32[size_t(s)]) && (d == Type::F32 || k.from_f32[size_t(d)]);
}

// CONCAT (F32): along dim 0 a row is a's row then b's; along another dim a row comes whole
// from a or, past a's extent, from b.
void compute_concat(const Tensor& node, const OpContext& ctx) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int dim = node.params[0];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    if (dim == 0) {
      std::memcpy(y, frow(a, r), size_t(a.ne[0]) * sizeof(float));
      std::memcpy(y + a.ne[0], frow(b, r), size_t(b.ne[0]) * sizeof(float));
      return;
    }
    int64_t i[4] = {0, r.i1, r.i2, r.i3};
    const bool from_a = i[dim] < a.ne[dim];
    if (!from_a) i[dim] -= a.ne[dim];
    std::memcpy(y, frow(from_a ? a : b, {i[1], i[2], i[3]}), size_t(node.ne[0]) * sizeof(float));
  });
}

}  // namespace

OpImpl impl_copy() { return {compute_copy, copy_work_size, copy_supported}; }
OpImpl impl_concat() { return {compute_concat, nullptr, nullptr}; }

}  // namespace hart::cpu
