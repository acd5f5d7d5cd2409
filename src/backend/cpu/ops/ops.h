// Internal interface between the CPU backend and its op kernels (one file per op family).
// A kernel computes its share (ith of nth) of one node; shapes were checked by the builders.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <utility>

#include "backend/cpu/kernels.h"
#include "backend/cpu/threadpool.h"
#include "common/fp16.h"
#include "graph/tensor.h"

namespace hart::cpu {

class WeightPacks;

constexpr size_t kCacheLine = 64;
inline size_t align_up(size_t n) { return (n + kCacheLine - 1) / kCacheLine * kCacheLine; }

// Kernels cannot throw (they run on pool threads): they report bad data (an out-of-range row
// id) here, skip that piece of work, and the backend throws once the graph has finished.
class ErrorSink {
 public:
  void fail(std::string message);
  const std::string& first() const { return first_; }

 private:
  std::mutex mutex_;
  std::string first_;
};

// The threads computing one node. Most nodes are cut into independent pieces that any thread
// may compute (ith = the piece, nth = the number of pieces); a node whose kernel meets at
// barriers is computed by a team, every thread its own piece (ith = the thread).
class NodeThreads {
 public:
  NodeThreads(ThreadPool& pool, bool team) : pool_(pool), team_(team) {}
  // Only for nodes whose OpImpl::team said so; a no-op for the others.
  void barrier() const {
    if (team_) pool_.barrier();
  }

 private:
  ThreadPool& pool_;
  bool team_;
};

struct OpContext {
  int ith, nth;
  const Kernels& k;
  std::byte* work;              // the node's work buffer (work_size bytes)
  const NodeThreads& pool;      // barrier() between the phases of one node
  std::atomic<int64_t>& chunk;  // this node's work counter for dynamic scheduling, starts at 0
  ErrorSink& errors;
  const WeightPacks* packs = nullptr;  // the backend's repacked weights (MUL_MAT, MUL_MAT_ID)

  // This thread's share [begin, end) of n items, in contiguous ranges.
  std::pair<int64_t, int64_t> range(int64_t n) const {
    const int64_t per = (n + nth - 1) / nth;
    const int64_t begin = std::min<int64_t>(n, per * ith);
    return {begin, std::min<int64_t>(n, begin + per)};
  }
  // This thread's slice of a work buffer laid out as nth slices of per_thread bytes.
  std::byte* thread_work(size_t per_thread) const { return work + size_t(ith) * align_up(per_thread); }
};

// Row r of the rows (dims 1..3) of t, as (i1, i2, i3).
struct RowIndex {
  int64_t i1, i2, i3;
};
inline RowIndex row_index(const Tensor& t, int64_t r) {
  return {r % t.ne[1], (r / t.ne[1]) % t.ne[2], r / (t.ne[1] * t.ne[2])};
}
inline char* row_ptr(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}
inline char* row_ptr(const Tensor& t, RowIndex r) { return row_ptr(t, r.i1, r.i2, r.i3); }

// Calls f(dst row, row index) for this thread's rows of dst.
template <class F>
inline void for_my_rows(const Tensor& dst, const OpContext& ctx, F f) {
  const auto [begin, end] = ctx.range(dst.nrows());
  for (int64_t r = begin; r < end; r++) {
    const RowIndex ri = row_index(dst, r);
    f(reinterpret_cast<float*>(row_ptr(dst, ri)), ri);
  }
}

inline const float* frow(const Tensor& t, RowIndex r) { return reinterpret_cast<const float*>(row_ptr(t, r)); }

// Element j of a row of t, F32 or F16 (masks: llama.cpp builds them in F16).
inline float f32_or_f16_at(const Tensor& t, const char* row, int64_t j) {
  return t.type == Type::F16 ? fp16_to_f32(reinterpret_cast<const fp16_t*>(row)[j])
                             : reinterpret_cast<const float*>(row)[j];
}

// What the backend knows about an op: whether the kernel set can run this node, how much work
// buffer it needs, and the kernel. Metadata-only ops (views) have no compute.
struct OpImpl {
  void (*compute)(const Tensor& node, const OpContext& ctx) = nullptr;
  size_t (*work_size)(const Tensor& node, const Kernels& k, int nth) = nullptr;
  bool (*supports)(const Tensor& node, const Kernels& k) = nullptr;  // nullptr: always
  // Does the kernel call ctx.pool.barrier() when nth threads compute this node? Then all of
  // them take part, each with its own ith. nullptr: never.
  bool (*team)(const Tensor& node, const Kernels& k, int nth) = nullptr;
};
inline bool always_team(const Tensor&, const Kernels&, int) { return true; }
const OpImpl& op_impl(Op op);

// One entry per op family file.
OpImpl impl_get_rows();
OpImpl impl_set_rows();
OpImpl impl_copy();  // CPY and CONT
OpImpl impl_concat();
OpImpl impl_binary();  // ADD, SUB, MUL, DIV
OpImpl impl_scale();
OpImpl impl_clamp();
OpImpl impl_unary();
OpImpl impl_glu();
OpImpl impl_rms_norm();
OpImpl impl_soft_max();
OpImpl impl_rope();
OpImpl impl_mul_mat();
OpImpl impl_mul_mat_id();
OpImpl impl_flash_attn_ext();
OpImpl impl_paged_attn();
OpImpl impl_ssm_conv();
OpImpl impl_wkv7();
OpImpl impl_gated_delta_net();
OpImpl impl_norm();
OpImpl impl_l2_norm();
OpImpl impl_sum_rows();
OpImpl impl_top_k();

}  // namespace hart::cpu
