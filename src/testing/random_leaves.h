// Random leaf tensors with memory of their own: the inputs of the op tests and of the `hart ops`
// grid (op_cases.h). No test framework here, so that `hart` can use it.
// The same seed gives the same values, which lets a case be built twice with identical inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "graph/graph.h"

namespace hart::testing {

class RandomLeaves {
 public:
  // fill = false: leaves get memory but no values (a support check builds, never computes).
  explicit RandomLeaves(uint32_t seed, bool fill = true) : rng_(seed), fill_(fill) {}
  Context ctx;

  // A leaf filled with uniform values in [lo, hi) converted to type, or ids in [lo, hi) for
  // I32 / I64.
  Tensor* random(Type type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  Tensor* random(Type type, std::span<const int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  // Memory for every node of g that has none, each its own (no reuse); views point into theirs.
  void allocate(const Graph& g);
  // n bytes, 64-byte aligned, alive as long as this object.
  std::byte* bytes(size_t n);
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  bool fill_;
  std::vector<std::unique_ptr<std::byte[]>> memory_;
};

// One case built twice (the second time with fill = false) gets the first build's leaf values:
// copies the memory of every leaf and node of `from` that had its own before allocate() into the
// same tensor of `to` (making the values once instead of twice is a fifth of `hart ops --mode
// test`). Throws hart::Error when the two graphs' tensors differ in shape or type.
void copy_leaf_values(const Graph& from, const Graph& to);

}  // namespace hart::testing
