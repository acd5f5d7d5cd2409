// Test helpers for ops_test.cpp: random leaf tensors with owned memory, running a graph on the
// CPU backend, and a double-precision view of any tensor for the naive references.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

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

class Bench {
 public:
  explicit Bench(uint32_t seed = 42) : rng_(seed) {}
  Context ctx;

  // A leaf with its own memory, filled with uniform random values in [lo, hi) (converted to
  // the type), or integer ids in [lo, hi) for I32/I64.
  Tensor* random(Type type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  // Plans memory (with reuse) for outputs and computes them with n_threads.
  void run(std::initializer_list<Tensor*> outputs, int n_threads);
  // Same, but every computed tensor gets its own buffer (no reuse), for comparisons.
  void run_without_reuse(std::initializer_list<Tensor*> outputs, int n_threads);
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  std::vector<std::unique_ptr<std::byte[]>> memory_;
  std::byte* allocate(size_t bytes);
};

// Asserts |got - want| <= atol + rtol * |want| for every element.
void expect_near(const Dense& got, const Dense& want, double atol, double rtol = 0.0);

}  // namespace hart::cpu::test
