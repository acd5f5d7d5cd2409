// The op grid of `hart ops` (like llama.cpp's test-backend-ops): each case builds one op over
// random leafs of given types and shapes. Built twice with the same seed, a case gives identical
// inputs to the backend under test and to the CPU reference.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hart::sched {

// Random leafs with their own memory.
class Leaves {
 public:
  explicit Leaves(uint32_t seed) : rng_(seed) {}
  Context ctx;
  // Uniform values in [lo, hi) converted to type; ids in [lo, hi) for I32 / I64.
  Tensor* random(Type type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  // Memory for every node of g (no reuse).
  void allocate(const Graph& g);

 private:
  std::byte* bytes(size_t n);
  std::mt19937 rng_;
  std::vector<std::unique_ptr<std::byte[]>> memory_;
};

struct OpCase {
  Op op;
  std::string params;  // "type_a=q8_0,type_b=f32,m=32,n=1,k=256"
  double max_nmse;     // test mode threshold against the CPU
  std::function<Tensor*(Leaves&)> build;  // returns the op's node
};

std::vector<OpCase> op_cases();

// Normalized mean squared error of got against want (both read as floats through strides).
double nmse(const Tensor& got, const Tensor& want);

}  // namespace hart::sched
