// Test helpers for the CPU op tests: random leaves computed on the CPU backend, and a tolerance
// check over the values read back (testing/dense.h).
#pragma once

#include <initializer_list>
#include <span>

#include "graph/graph.h"
#include "testing/dense.h"
#include "testing/random_leaves.h"

namespace hart::cpu::test {

// Random leaves and running graphs over them on the CPU backend.
class Bench : public testing::RandomLeaves {
 public:
  explicit Bench(uint32_t seed = 42) : RandomLeaves(seed) {}

  // Plans memory (with reuse) for outputs and computes them with n_threads.
  void run(std::initializer_list<Tensor*> outputs, int n_threads) { run(std::span<Tensor* const>(outputs), n_threads); }
  void run(std::span<Tensor* const> outputs, int n_threads);
  // Same, but every computed tensor gets its own buffer (no reuse), for comparisons.
  void run_without_reuse(std::initializer_list<Tensor*> outputs, int n_threads);
};

// Asserts |got - want| <= atol + rtol * |want| for every element.
void expect_near(const testing::Dense& got, const testing::Dense& want, double atol, double rtol = 0.0);

}  // namespace hart::cpu::test
