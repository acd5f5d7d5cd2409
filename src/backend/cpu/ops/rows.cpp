// GET_ROWS (gather rows of any type into F32) and SET_ROWS (scatter F32 rows, converting to the
// destination type, e.g. into an F16 KV cache).
#include <algorithm>
#include <string>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {
namespace {

// Index tensors are I32 or I64; element (i0, i1, i2) read through the strides.
int64_t read_id(const Tensor& ids, int64_t i0, int64_t i1, int64_t i2) {
  const char* p = static_cast<const char*>(ids.data) + i0 * ids.nb[0] + i1 * ids.nb[1] + i2 * ids.nb[2];
  if (ids.type == Type::I64) return *reinterpret_cast<const int64_t*>(p);
  return *reinterpret_cast<const int32_t*>(p);
}

bool id_ok(const OpContext& ctx, const Tensor& node, int64_t id, int64_t rows) {
  if (id >= 0 && id < rows) return true;
  ctx.errors.fail(std::string(op_name(node.op)) + ": row id " + std::to_string(id) + " is outside 0.." +
                  std::to_string(rows - 1) + (node.name[0] ? std::string(" in '") + node.name + "'" : ""));
  return false;
}

void compute_get_rows(const Tensor& node, const OpContext& ctx) {
  // table [n, rows, b2, b3], ids [m, b2, b3] -> y [n, m, b2, b3]
  const Tensor& table = *node.src[0];
  const Tensor& ids = *node.src[1];
  const ToF32Fn convert = ctx.k.to_f32[size_t(table.type)];
  for_my_rows(node, ctx, [&](float* y, RowIndex r) {
    const int64_t id = read_id(ids, r.i1, r.i2, r.i3);
    if (id_ok(ctx, node, id, table.ne[1])) convert(row_ptr(table, id, r.i2, r.i3), y, node.ne[0]);
  });
}

// A row longer than this is written in chunks of it, shared by the threads: a recurrent layer's
// state is one row of a MiB per sequence (Qwen3.5-0.8B), which one thread copied while the others
// waited. A multiple of every block size, so that a chunk starts on a block.
constexpr int64_t kRowChunk = 16384;

void compute_set_rows(const Tensor& node, const OpContext& ctx) {
  // dst(:, ids(j, i2 % b1, i3 % b2), i2, i3) = src(:, j, i2, i3)
  const Tensor& src = *node.src[1];
  const Tensor& ids = *node.src[2];
  const FromF32Fn convert = ctx.k.from_f32[size_t(node.type)];
  const int64_t n = node.ne[0], chunks = (n + kRowChunk - 1) / kRowChunk;
  const auto [begin, end] = ctx.range(src.nrows() * chunks);
  for (int64_t item = begin; item < end; item++) {
    const RowIndex ri = row_index(src, item / chunks);
    const int64_t at = item % chunks * kRowChunk;
    const int64_t id = read_id(ids, ri.i1, ri.i2 % ids.ne[1], ri.i3 % ids.ne[2]);
    if (id_ok(ctx, node, id, node.ne[1]))
      convert(frow(src, ri) + at, row_ptr(node, id, ri.i2, ri.i3) + row_size(node.type, at),
              std::min(kRowChunk, n - at));
  }
}

bool converts_to_f32(const Tensor& node, const Kernels& k) { return k.to_f32[size_t(node.src[0]->type)]; }
bool converts_from_f32(const Tensor& node, const Kernels& k) { return k.from_f32[size_t(node.type)]; }

}  // namespace

OpImpl impl_get_rows() { return {compute_get_rows, nullptr, converts_to_f32}; }
OpImpl impl_set_rows() { return {compute_set_rows, nullptr, converts_from_f32}; }

}  // namespace hart::cpu
