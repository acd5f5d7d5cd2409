#include "backend/cpu/op_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"

namespace hart::cpu::test {

void Bench::run(std::span<Tensor* const> outputs, int n_threads) {
  Graph g = build_graph(outputs);
  const size_t size = plan_memory(g, nullptr);
  plan_memory(g, bytes(size));
  CpuBackend(n_threads).compute(g);
}

void Bench::run_without_reuse(std::initializer_list<Tensor*> outputs, int n_threads) {
  Graph g = build_graph(outputs);
  allocate(g);
  CpuBackend(n_threads).compute(g);
}

void expect_near(const testing::Dense& got, const testing::Dense& want, double atol, double rtol) {
  ASSERT_EQ(got.ne, want.ne);
  int reported = 0;
  for (size_t i = 0; i < got.v.size(); i++) {
    const double tol = atol + rtol * std::fabs(want.v[i]);
    if (!(std::fabs(got.v[i] - want.v[i]) <= tol) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << got.v[i] << ", want " << want.v[i] << " (tol " << tol << ")";
  }
}

}  // namespace hart::cpu::test
