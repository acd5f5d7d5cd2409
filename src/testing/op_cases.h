// The op grid of `hart ops` (like llama.cpp's test-backend-ops): each case builds one op over
// random leafs of given types and shapes. Built twice with the same seed, a case gives identical
// inputs to the backend under test and to the CPU reference.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "testing/random_leaves.h"

namespace hart::testing {

struct OpCase {
  std::string op;      // the name reports print: "MUL_MAT", "SILU", ...
  std::string params;  // "type_a=q8_0,type_b=f32,m=32,n=1,k=256"
  double max_nmse;     // test mode threshold against the CPU
  std::function<Tensor*(RandomLeaves&)> build;  // returns the op's node
};

std::vector<OpCase> op_cases();

// Normalized mean squared error of got against want (both read through their strides: dense.h).
double nmse(const Tensor& got, const Tensor& want);

}  // namespace hart::testing
