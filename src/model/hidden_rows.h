// A sequence's last hidden states after the output norm, one row of n_embd floats per computed
// position (ForwardGraph::hidden_all): what draft-mtp drafts from (spec/mtp_drafter.h). A
// Session keeps them for its sequence 0 (SessionParams::keep_hidden), the server's engine for
// each drafting sequence. Rows are held for positions [first(), end()); a step writes the rows
// of the positions it computed, and those after them, stale, go.
#pragma once

#include <span>
#include <vector>

namespace hart {

class HiddenRows {
 public:
  explicit HiddenRows(int width) : width_(size_t(width)) {}
  // The rows of positions [pos, pos + n), row after row in `rows`.
  void store(const float* rows, int pos, int n);
  // Forgets the rows of positions >= n (those a sequence of n positions no longer holds).
  void trim(int n);
  // Forgets every row; the next ones start at `pos` (a context shift moved the positions).
  void restart(int pos);
  // Forgets the rows before `pos` (a drafter has read them).
  void forget_before(int pos);
  // The row of `pos`; throws hart::Error when it is not held.
  std::span<const float> at(int pos) const;
  int first() const { return first_; }
  int end() const { return first_ + int(rows_.size() / width_); }
  int width() const { return int(width_); }

 private:
  size_t width_;
  std::vector<float> rows_;
  int first_ = 0;
};

}  // namespace hart
