// Test helpers for ops_test.cpp: random leaf tensors with owned memory, running a graph on the
// CPU backend, and a double-precision view of any tensor for the naive references.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backend/cpu/random_leaves.h"
#include "graph/graph.h"

namespace hart::cpu::test {

// Values of a tensor as doubles in a dense [ne0, ne1, ne2, ne3] array.
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

// Random leaves (random_leaves.h) and running graphs over them on the CPU backend.
class Bench : public RandomLeaves {
 public:
  explicit Bench(uint32_t seed = 42) : RandomLeaves(seed) {}

  // Plans memory (with reuse) for outputs and computes them with n_threads.
  void run(std::initializer_list<Tensor*> outputs, int n_threads);
  // Same, but every computed tensor gets its own buffer (no reuse), for comparisons.
  void run_without_reuse(std::initializer_list<Tensor*> outputs, int n_threads);
};

// Asserts |got - want| <= atol + rtol * |want| for every element.
void expect_near(const Dense& got, const Dense& want, double atol, double rtol = 0.0);

}  // namespace hart::cpu::test
