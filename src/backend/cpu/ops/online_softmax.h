// The online softmax shared by FLASH_ATTN_EXT (attention.cpp) and PAGED_ATTN
// (paged_attention.cpp): softmax(q·kᵀ · scale + bias) · v over K/V rows that arrive a block at a
// time, without a score matrix. Each query row keeps a running max m, a running sum l and an
// unnormalised F32 accumulator that is rescaled whenever m grows. A work unit owns `rows` query
// rows (its tokens x the query heads of one KV head) and hands each K/V row to all of them (GQA).
// Blocks of up to kBlock K/V rows: one softmax_block call and at most one rescale per row and
// block, instead of per K/V row (at 1,024 tokens of context these per-row calls took more time
// than the weights' GEMV of a SmolLM2-135M decode step). Every inner loop goes through the
// kernel table (scores or vec_dot, from_f32, softmax_block, scale, values or to_f32 + axpy_rows).
#pragma once

#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {

class OnlineSoftmax {
 public:
  // q rows of d floats dot K rows of k_type; V rows of v_type, dv elements.
  OnlineSoftmax(const Kernels& k, Type k_type, Type v_type, int64_t rows, int64_t d, int64_t dv)
      : k_(k), dot_(k.dot[size_t(k_type)].vec_dot), scores_(k.dot[size_t(k_type)].scores),
        values_(k.values[size_t(v_type)]), act_(k.dot[size_t(k_type)].act_type), v_type_(v_type),
        rows_(rows), d_(d), dv_(dv), q_row_(row_size(act_, d)) {}

  // Can the kernel set run attention over K of k_type and V of v_type?
  static bool supported(const Kernels& k, Type k_type, Type v_type) {
    const DotKernel& dk = k.dot[size_t(k_type)];
    return dk.vec_dot && (dk.act_type == Type::F32 || k.from_f32[size_t(dk.act_type)]) &&
           (v_type == Type::F32 || k.to_f32[size_t(v_type)]);
  }

  static constexpr int64_t kBlock = 32;  // K/V rows one add() takes at most

  // Scratch per unit: converted q rows, accumulators, m and l per row, a block of V rows as
  // floats, a block's scores (then weights) per row.
  size_t scratch_bytes() const {
    return align_up(size_t(rows_) * q_row_) + align_up(size_t(rows_ * dv_) * sizeof(float)) +
           2 * align_up(size_t(rows_) * sizeof(float)) + align_up(size_t(kBlock * dv_) * sizeof(float)) +
           align_up(size_t(rows_ * kBlock) * sizeof(float));
  }
  void set_scratch(std::byte* base) {
    q_ = base;
    base += align_up(size_t(rows_) * q_row_);
    acc_ = reinterpret_cast<float*>(base);
    base += align_up(size_t(rows_ * dv_) * sizeof(float));
    m_ = reinterpret_cast<float*>(base);
    base += align_up(size_t(rows_) * sizeof(float));
    l_ = reinterpret_cast<float*>(base);
    base += align_up(size_t(rows_) * sizeof(float));
    v_ = reinterpret_cast<float*>(base);
    base += align_up(size_t(kBlock * dv_) * sizeof(float));
    e_ = reinterpret_cast<float*>(base);
  }

  // Row r starts over with query q (d floats): nothing accumulated, m = -inf.
  void start(int64_t r, const float* q) {
    std::byte* dst = q_ + size_t(r) * q_row_;
    if (act_ == Type::F32) std::copy(q, q + d_, reinterpret_cast<float*>(dst));
    else k_.from_f32[size_t(act_)](q, dst, d_);
    std::fill(acc(r), acc(r) + dv_, 0.0f);
    m_[r] = -INFINITY;
    l_[r] = 0.0f;
  }

  // Rows [r0, r1) see a block of n <= kBlock K/V pairs (raw rows k[j], v[j]); row r sees only
  // the first seen[(r - r0) / rows_per_seen] of them (seen nullptr: all n; a tile's tokens, each
  // a run of rows_per_seen query heads, end their causal lists at different pairs), with
  // score(r, j) = q_r·k_j · scale + bias[j] (bias nullptr: 0). One softmax_block call per row
  // turns its scores into the weights e^(score - m') and updates its m and l.
  void add(int64_t r0, int64_t r1, int64_t n, const char* const* k, const char* const* v, float scale,
           const float* bias, const int64_t* seen = nullptr, int64_t rows_per_seen = 1) {
    const int64_t rows = r1 - r0;
    float* e = e_;  // [i * n + j]: row r0 + i's score, then weight, of pair j
    // Every row's dots with every pair at once where the set can (causally unseen ones unused).
    if (scores_) scores_(d_, rows, q_ + size_t(r0) * q_row_, q_row_, n, k, e);
    for (int64_t i = 0; i < rows; i++) {
      const int64_t r = r0 + i, n_seen = seen ? seen[i / rows_per_seen] : n;
      float* ei = e + i * n;
      if (!scores_)
        for (int64_t j = 0; j < n_seen; j++) dot_(d_, &ei[j], k[j], q_ + size_t(r) * q_row_);
      const float shrink = k_.softmax_block(n_seen, ei, scale, bias, &m_[r], &l_[r]);
      std::fill(ei + n_seen, ei + n, 0.0f);  // unseen pairs weigh 0
      if (shrink != 1.0f) k_.scale(dv_, acc(r), shrink, acc(r));  // a new maximum: rescale the sum so far
    }
    // acc_r += sum_j e_rj v_j: in one call where the set can, else the block's V rows as floats
    // once, then one call per row.
    if (values_) {
      values_(dv_, rows, n, e, v, acc(r0));
      return;
    }
    const float* vf[kBlock];
    for (int64_t j = 0; j < n; j++) vf[j] = v_row(v[j], j);
    for (int64_t i = 0; i < rows; i++) k_.axpy_rows(dv_, n, e + i * n, vf, acc(r0 + i));
  }

  // out (dv floats) = row r's softmax-weighted sum of V. A row that saw no K/V (or only
  // masked ones) has no probability mass: its output is 0.
  void finish(int64_t r, float* out) const { k_.scale(dv_, acc(r), l_[r] > 0.0f ? 1.0f / l_[r] : 0.0f, out); }

  // The unnormalised state of row r, for merging partial results (FlashDecoding).
  float* acc(int64_t r) const { return acc_ + r * dv_; }
  float max(int64_t r) const { return m_[r]; }
  float sum(int64_t r) const { return l_[r]; }

 private:
  // A V row as floats: in place for F32, else converted into scratch row j.
  const float* v_row(const char* raw, int64_t j) {
    if (v_type_ == Type::F32) return reinterpret_cast<const float*>(raw);
    float* row = v_ + j * dv_;
    k_.to_f32[size_t(v_type_)](raw, row, dv_);
    return row;
  }

  const Kernels& k_;
  VecDotFn dot_;
  ScoresFn scores_;  // nullptr: dot_ per pair
  ValuesFn values_;  // nullptr: to_f32 per V row, then axpy_rows per query row
  Type act_, v_type_;  // act_: q converted to K's activation type for the dot product
  int64_t rows_, d_, dv_;
  size_t q_row_;
  std::byte* q_ = nullptr;
  float *acc_ = nullptr, *m_ = nullptr, *l_ = nullptr, *e_ = nullptr;
  float* v_ = nullptr;  // kBlock rows of dv floats
};

}  // namespace hart::cpu
