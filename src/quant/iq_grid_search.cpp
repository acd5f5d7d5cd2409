#include "quant/iq_grid_search.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <utility>

#include "common/error.h"

namespace hart::quant {

IqGridSearch::IqGridSearch(const void* grid, int n_entries, int dims, int stride, int n_distances)
    : dims_(dims), levels_(size_t(n_entries) * size_t(dims)) {
  const auto* bytes = static_cast<const int8_t*>(grid);
  std::vector<int8_t> values;
  for (int e = 0; e < n_entries; e++)
    for (int i = 0; i < dims; i++) values.push_back(bytes[size_t(e) * size_t(stride) + size_t(i)]);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  n_levels_ = int(values.size());
  bits_ = n_levels_ <= 4 ? 2 : 3;
  for (int e = 0; e < n_entries; e++)
    for (int i = 0; i < dims; i++) {
      const int8_t b = bytes[size_t(e) * size_t(stride) + size_t(i)];
      levels_[size_t(e) * size_t(dims) + size_t(i)] = int8_t(std::lower_bound(values.begin(), values.end(), b) - values.begin());
    }

  const int n_keys = 1 << (bits_ * dims);
  map_.assign(size_t(n_keys), -1);
  first_.assign(size_t(n_keys), 0);
  for (int e = 0; e < n_entries; e++) map_[key(levels(e))] = e;

  // Off-grid points whose levels all exist (the quantizers clamp to them): squared distances in
  // units of 2l+1, sorted by (distance, entry), cut after n_distances distinct distances.
  std::vector<std::pair<int, int>> dist(static_cast<size_t>(n_entries));
  int8_t L[8];
  for (int k = 0; k < n_keys; k++) {
    if (map_[size_t(k)] >= 0) continue;
    bool valid = true;
    for (int i = 0; i < dims; i++) {
      L[i] = int8_t((k >> (bits_ * i)) & ((1 << bits_) - 1));
      valid = valid && L[i] < n_levels_;
    }
    if (!valid) continue;
    for (int e = 0; e < n_entries; e++) {
      int d2 = 0;
      for (int i = 0; i < dims; i++) {
        const int diff = 2 * (levels(e)[i] - L[i]);
        d2 += diff * diff;
      }
      dist[size_t(e)] = {d2, e};
    }
    std::sort(dist.begin(), dist.end());
    first_[size_t(k)] = uint32_t(candidates_.size());
    candidates_.push_back(0);
    int d2 = dist[0].first, distinct = 1;
    for (const auto& [d, e] : dist) {
      if (d > d2) {
        if (distinct == n_distances) break;
        d2 = d;
        distinct++;
      }
      candidates_.push_back(uint16_t(e));
    }
    candidates_[first_[size_t(k)]] = uint16_t(candidates_.size() - first_[size_t(k)] - 1);
  }
}

int IqGridSearch::nearest(int8_t* L, const float* x, const float* w, float scale, const float* values) const {
  const uint16_t* c = &candidates_[first_[size_t(key(L))]];
  if (map_[size_t(key(L))] >= 0 || c[0] == 0) throw Error("IQ grid search: no candidates for an off-grid point");
  float best = FLT_MAX;
  int best_entry = -1;
  for (int j = 1; j <= c[0]; j++) {
    const int8_t* g = levels(c[j]);
    float d2 = 0;
    for (int i = 0; i < dims_; i++) {
      const float diff = scale * (values ? values[g[i]] : float(2 * g[i] + 1)) - x[i];
      d2 += w[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      best_entry = c[j];
    }
  }
  if (best_entry < 0) throw Error("IQ grid search: no finite distance");
  std::memcpy(L, levels(best_entry), size_t(dims_));
  return best_entry;
}

int IqGridSearch::project(int8_t* L, const float* x, const float* w, float scale, bool* on_grid) const {
  const int e = index(L);
  if (on_grid) *on_grid = e >= 0;
  return e >= 0 ? e : nearest(L, x, w, scale);
}

}  // namespace hart::quant
