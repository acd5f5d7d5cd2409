// The online softmax shared by FLASH_ATTN_EXT (attention.cpp) and PAGED_ATTN
// (paged_attention.cpp): softmax(q·kᵀ · scale + bias) · v over K/V rows that arrive one at a
// time, without a score matrix. Each query row keeps a running max m, a running sum l and an
// unnormalised F32 accumulator that is rescaled whenever m grows. A work unit owns `rows` query
// rows (its tokens x the query heads of one KV head) and hands each K/V row to all of them (GQA).
// Every inner loop goes through the kernel table (vec_dot, from_f32, to_f32, exp, scale, axpy).
#pragma once

#include <algorithm>
#include <cmath>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {

class OnlineSoftmax {
 public:
  // q rows of d floats dot K rows of k_type; V rows of v_type, dv elements.
  OnlineSoftmax(const Kernels& k, Type k_type, Type v_type, int64_t rows, int64_t d, int64_t dv)
      : k_(k), dot_(k.dot[size_t(k_type)].vec_dot), act_(k.dot[size_t(k_type)].act_type), v_type_(v_type),
        rows_(rows), d_(d), dv_(dv), q_row_(row_size(act_, d)) {}

  // Can the kernel set run attention over K of k_type and V of v_type?
  static bool supported(const Kernels& k, Type k_type, Type v_type) {
    const DotKernel& dk = k.dot[size_t(k_type)];
    return dk.vec_dot && (dk.act_type == Type::F32 || k.from_f32[size_t(dk.act_type)]) &&
           (v_type == Type::F32 || k.to_f32[size_t(v_type)]);
  }

  // Scratch per unit: converted q rows, accumulators, m and l per row, one V row as floats, two
  // exponents per row.
  size_t scratch_bytes() const {
    return align_up(size_t(rows_) * q_row_) + align_up(size_t(rows_ * dv_) * sizeof(float)) +
           2 * align_up(size_t(rows_) * sizeof(float)) + align_up(size_t(dv_) * sizeof(float)) +
           align_up(size_t(2 * rows_) * sizeof(float));
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
    base += align_up(size_t(dv_) * sizeof(float));
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

  // A V row as floats (in place for F32, else converted into the scratch row).
  const float* v_row(const char* raw) {
    if (v_type_ == Type::F32) return reinterpret_cast<const float*>(raw);
    k_.to_f32[size_t(v_type_)](raw, v_, dv_);
    return v_;
  }

  // Rows [r0, r1) see one more K/V pair: score = q·k · scale + bias. The exponentials of all
  // rows go through one kernel call: the weight e^(score - m') and the shrink e^(m - m') of what
  // was accumulated, with m' = max(m, score) (one of the two is e^0 = 1 exactly; a row's first
  // pair has m = -inf, so the shrink of its empty accumulator is 0).
  void add(int64_t r0, int64_t r1, const char* krow, const float* vrow, float scale, float bias) {
    const int64_t n = r1 - r0;
    float* e = e_;  // [0, n): weight exponents, [n, 2n): shrink exponents
    for (int64_t i = 0; i < n; i++) {
      const int64_t r = r0 + i;
      float score;
      dot_(d_, &score, krow, q_ + size_t(r) * q_row_);
      score = score * scale + bias;
      const float m = std::max(m_[r], score);
      e[i] = score - m;
      e[n + i] = m_[r] - m;
      m_[r] = m;
    }
    k_.exp(2 * n, e, e);
    for (int64_t i = 0; i < n; i++) {
      const int64_t r = r0 + i;
      if (e[n + i] != 1.0f) {  // new maximum: rescale what was accumulated so far
        l_[r] *= e[n + i];
        k_.scale(dv_, acc(r), e[n + i], acc(r));
      }
      l_[r] += e[i];
      k_.axpy(dv_, e[i], vrow, acc(r));
    }
  }

  // out (dv floats) = row r's softmax-weighted sum of V. A row that saw no K/V (or only
  // masked ones) has no probability mass: its output is 0.
  void finish(int64_t r, float* out) const { k_.scale(dv_, acc(r), l_[r] > 0.0f ? 1.0f / l_[r] : 0.0f, out); }

  // The unnormalised state of row r, for merging partial results (FlashDecoding).
  float* acc(int64_t r) const { return acc_ + r * dv_; }
  float max(int64_t r) const { return m_[r]; }
  float sum(int64_t r) const { return l_[r]; }

 private:
  const Kernels& k_;
  VecDotFn dot_;
  Type act_, v_type_;  // act_: q converted to K's activation type for the dot product
  int64_t rows_, d_, dv_;
  size_t q_row_;
  std::byte* q_ = nullptr;
  float *acc_ = nullptr, *m_ = nullptr, *l_ = nullptr, *v_ = nullptr, *e_ = nullptr;
};

}  // namespace hart::cpu
