// A tensor's values as doubles in a dense array: how tests and `hart ops` read what a backend
// computed, whatever its type and strides, to compare it with a reference.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "graph/tensor.h"

namespace hart::testing {

// Values in a dense [ne0, ne1, ne2, ne3] array.
struct Dense {
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  std::vector<double> v;

  Dense() = default;
  explicit Dense(std::array<int64_t, 4> shape)
      : ne(shape), v(size_t(shape[0] * shape[1] * shape[2] * shape[3]), 0.0) {}
  double& at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    return v[size_t(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0)];
  }
  double at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return v[size_t(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0)];
  }
};

// Reads any float, integer or quantized tensor through its strides.
Dense read(const Tensor& t);

}  // namespace hart::testing
