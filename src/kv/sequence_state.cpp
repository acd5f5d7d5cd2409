#include "kv/sequence_state.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "common/memory_budget.h"

namespace hart::kv {

bool StateLayout::uses(Pool p) const {
  return std::any_of(kv.begin(), kv.end(), [p](const KvLayer& l) { return l.row > 0 && l.pool == p; });
}

bool StateLayout::has_recurrent() const {
  return std::any_of(recurrent.begin(), recurrent.end(), [](const auto& parts) { return !parts.empty(); });
}

SequenceStore::SequenceStore(StateLayout layout, Capacity cap, Type kv_type)
    : layout_(std::move(layout)),
      cap_{layout_.uses(Pool::FULL) ? cap.full : 0, layout_.uses(Pool::WINDOW) ? cap.window : 0,
           layout_.has_recurrent() ? cap.cells : 0},
      kv_(layout_.kv, int(cap_.full), int(cap_.window), kv_type) {
  if (layout_.uses(Pool::WINDOW) && layout_.window <= 0)
    throw Error("sliding-window layers need a window of at least one position");
  for (int p = 0; p < kPools; p++) {
    const int64_t n = p == int(Pool::FULL) ? cap_.full : cap_.window;
    if (n > 0) pools_[p] = std::make_unique<SlotPool>(int32_t(n));
  }
  // Recurrent state: each part of each layer is (floats, 1 + cells), column 0 the zero cell.
  const int64_t cols = 1 + cap_.cells;
  for (const auto& parts : layout_.recurrent)
    for (int64_t floats : parts) state_bytes_ += size_t(floats) * size_t(cols) * sizeof(float);
  if (state_bytes_ > 0) {
    require_memory(state_bytes_, std::to_string(cap_.cells) + " sequences' recurrent state");
    state_mem_.reset(new (std::nothrow) float[state_bytes_ / sizeof(float)]);
    if (!state_mem_) throw Error("cannot allocate " + std::to_string(state_bytes_ >> 20) + " MiB of recurrent state");
    std::memset(state_mem_.get(), 0, state_bytes_);
    cells_ = std::make_unique<SlotPool>(int32_t(1 + cap_.cells));
    std::vector<int32_t> zero;
    cells_->alloc(1, zero);  // slot 0 first: the zero cell, never free

  }
  float* p = state_mem_.get();
  states_.resize(layout_.recurrent.size());
  for (size_t il = 0; il < layout_.recurrent.size(); il++)
    for (size_t part = 0; part < layout_.recurrent[il].size(); part++) {
      const int64_t ne[2] = {layout_.recurrent[il][part], cols};
      Tensor* t = ctx_.new_leaf(Type::F32, ne, p);
      t->flags |= kFlagState;
      t->set_name("state_l%zu_%zu", il, part);
      states_[il].push_back(t);
      p += ne[0] * ne[1];
    }
}

bool SequenceStore::reserve(SeqState& s, int n) {
  const int end = s.n + n;
  const int64_t want_full = pools_[0] ? std::max<int64_t>(0, end - int64_t(s.full.size())) : 0;
  const int64_t want_window =
      pools_[1] ? std::max<int64_t>(0, end - (s.window_begin + int64_t(s.window.size()))) : 0;
  const bool want_cell = cells_ && s.cell < 0;
  if (want_full > n_free(Pool::FULL) || want_window > n_free(Pool::WINDOW) || (want_cell && n_free_cells() == 0))
    return false;
  if (pools_[0]) pools_[0]->alloc(int32_t(want_full), s.full);
  if (pools_[1]) {
    if (s.window.empty()) s.window_begin = s.n;
    pools_[1]->alloc(int32_t(want_window), s.window);
  }
  if (want_cell) {
    std::vector<int32_t> c;
    cells_->alloc(1, c);
    s.cell = c[0];
  }
  return true;
}

void SequenceStore::free_window_below(SeqState& s, int pos) {
  const int drop = std::clamp(pos - s.window_begin, 0, int(s.window.size()));
  const int owned_from = std::clamp(s.n_shared - s.window_begin, 0, drop);  // below n_shared: not ours
  if (drop > owned_from) pools_[1]->free(std::span(s.window).subspan(size_t(owned_from), size_t(drop - owned_from)));
  s.window.erase(s.window.begin(), s.window.begin() + drop);
  s.window_begin += drop;
}

void SequenceStore::commit(SeqState& s, int n, bool slide_window) {
  s.n += n;
  if (slide_window) this->slide_window(s);
  if (s.cell >= 0) s.cell_src = s.cell;
}

void SequenceStore::slide_window(SeqState& s) {
  if (pools_[1]) free_window_below(s, s.n - layout_.window + 1);
}

bool SequenceStore::truncate(SeqState& s, int n) {
  if (n >= s.n) return n == s.n;
  if (n == 0) {
    release(s);
    return true;
  }
  if (cells_ || n < s.n_shared) return false;  // a recurrent state cannot go back
  if (pools_[1] && s.window_begin > std::max(0, n - layout_.window + 1)) return false;
  s.n = n;
  drop_uncommitted(s);
  return true;
}

void SequenceStore::drop_uncommitted(SeqState& s) {
  if (pools_[0] && int(s.full.size()) > s.n) {
    pools_[0]->free(std::span(s.full).subspan(size_t(s.n)));
    s.full.resize(size_t(s.n));
  }
  if (pools_[1] && s.window_begin + int(s.window.size()) > s.n) {
    const size_t keep = size_t(std::max(0, s.n - s.window_begin));
    pools_[1]->free(std::span(s.window).subspan(keep));
    s.window.resize(keep);
  }
}

bool SequenceStore::keep_state_before_step(SeqState& s) {
  if (!cells_ || s.cell < 0 || s.cell != s.cell_src) return true;  // the step writes elsewhere already
  if (s.cell_spare < 0) {
    if (n_free_cells() == 0) return false;
    std::vector<int32_t> c;
    cells_->alloc(1, c);
    s.cell_spare = c[0];
  }
  std::swap(s.cell, s.cell_spare);  // reads the old cell (cell_src), writes the spare
  return true;
}

bool SequenceStore::shift(SeqState& s, int keep, int n_discard, std::vector<int32_t> (&moved)[kPools]) {
  if (keep < s.n_shared || n_discard <= 0 || keep > s.n - n_discard) return false;
  const int gone_end = keep + n_discard;  // positions [keep, gone_end) go
  if (pools_[0]) {  // position p is s.full[p]
    pools_[0]->free(std::span(s.full).subspan(size_t(keep), size_t(n_discard)));
    moved[0].insert(moved[0].end(), s.full.begin() + gone_end, s.full.end());
    s.full.erase(s.full.begin() + keep, s.full.begin() + gone_end);
  }
  if (pools_[1]) {  // the window holds [window_begin, window_begin + size): its part in the range goes
    const int begin = s.window_begin, end = begin + int(s.window.size());
    const int lo = std::clamp(keep, begin, end) - begin, hi = std::clamp(gone_end, begin, end) - begin;
    pools_[1]->free(std::span(s.window).subspan(size_t(lo), size_t(hi - lo)));
    moved[1].insert(moved[1].end(), s.window.begin() + hi, s.window.end());
    s.window.erase(s.window.begin() + lo, s.window.begin() + hi);
    // What is left is contiguous again: [begin, keep) stays, [gone_end, end) moves down to keep.
    s.window_begin = begin < keep ? begin : begin >= gone_end ? begin - n_discard : keep;
    s.window_from = s.window_begin;
  }
  s.n -= n_discard;
  return true;
}

void SequenceStore::release(SeqState& s) {
  if (pools_[0] && int(s.full.size()) > s.n_shared)
    pools_[0]->free(std::span(s.full).subspan(size_t(s.n_shared)));
  if (pools_[1]) free_window_below(s, s.window_begin + int(s.window.size()));
  if (cells_ && s.cell > 0) cells_->free(std::span(&s.cell, 1));
  if (cells_ && s.cell_spare > 0) cells_->free(std::span(&s.cell_spare, 1));
  s = SeqState{};
}

Capacity SequenceStore::need(int n, int chunk, bool checkpoint) const {
  Capacity c;
  if (pools_[0]) c.full = n;
  if (pools_[1]) c.window = std::min<int64_t>(n, layout_.window - 1 + chunk);
  if (cells_) c.cells = checkpoint ? 2 : 1;
  return c;
}

}  // namespace hart::kv
