// Internal: ggml's search structures over an IQ grid (iq2xs_init_impl, iq3xs_init_impl), which
// its IQ quantizers use to turn a vector of rounded levels into a grid entry. A grid entry is
// `dims` weights (8 for IQ2 / IQ1, 4 for IQ3), each one of the grid's `n_levels` magnitudes;
// level l stands for the odd integer 2l + 1 (ggml's scaled-down copy of the grid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hart::quant {

class IqGridSearch {
 public:
  // The grid's entries (each `dims` bytes, weight 0 lowest, in a uint64 or uint32 array: stride
  // 8 or 4 bytes); its levels are the ranks of the distinct byte values (signed). Points not on
  // the grid keep every entry within the `n_distances` smallest squared distances as candidates.
  IqGridSearch(const void* grid, int n_entries, int dims, int stride, int n_distances);

  int dims() const { return dims_; }
  int n_levels() const { return n_levels_; }
  // The grid index of levels L[0..dims), or -1 when that point is not on the grid.
  int index(const int8_t* L) const { return map_[key(L)]; }
  // The levels of entry `index`.
  const int8_t* levels(int index) const { return &levels_[size_t(index) * size_t(dims_)]; }
  // For L off the grid: the candidate entry minimizing sum_i w_i (scale * v(l_i) - x_i)^2 (the
  // first on ties, as ggml's find_best_neighbour), v(l) = 2l + 1 or values[l]; writes its levels
  // to L.
  int nearest(int8_t* L, const float* x, const float* w, float scale, const float* values = nullptr) const;
  // index(L) if on the grid, else nearest(L, ...) (*on_grid tells which).
  int project(int8_t* L, const float* x, const float* w, float scale, bool* on_grid = nullptr) const;

 private:
  int key(const int8_t* L) const {
    int k = 0;
    for (int i = 0; i < dims_; i++) k |= L[i] << (bits_ * i);
    return k;
  }
  int dims_, bits_, n_levels_;
  std::vector<int8_t> levels_;
  std::vector<int> map_;                  // key -> entry, or -1 (first_ gives its candidates)
  std::vector<uint32_t> first_;           // key -> start of its candidates in candidates_
  std::vector<uint16_t> candidates_;      // per off-grid key: count, then entries
};

}  // namespace hart::quant
