// The scheduler: placement by supports_op in the given order, splits at backend changes only
// (views never split), the results each split must hand back, and equal results to the CPU.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/op_test_util.h"
#include "common/error.h"
#include "testing/dense.h"

namespace hart::sched {
namespace {

using cpu::test::Bench;
using testing::read;

// A host-memory backend that accepts only MUL_MAT (and views) and records what it was given.
class MatOnly final : public Backend {
 public:
  const std::string& name() const override { return name_; }
  bool supports_op(const Tensor& n) const override { return n.op == Op::MUL_MAT || is_view_op(n.op); }
  void compute(const Graph& g) override { cpu_.compute(g); }
  void compute_part(const Graph& g, std::span<Tensor* const> host_reads) override {
    parts++;
    reads.insert(reads.end(), host_reads.begin(), host_reads.end());
    compute(g);
  }
  int parts = 0;
  std::vector<Tensor*> reads;

 private:
  std::string name_ = "MAT";
  cpu::CpuBackend cpu_{1};
};

struct Fixture {
  Bench b;
  Tensor *x, *w, *y, *out;
  Fixture() {
    x = b.random(Type::F32, {32, 3});
    w = b.random(Type::Q8_0, {32, 16});
    Tensor* n = mul(b.ctx, rms_norm(b.ctx, x, 1e-5f), b.random(Type::F32, {32}));
    y = mul_mat(b.ctx, w, n);                                   // (16, 3)
    Tensor* r = reshape(b.ctx, y, {16, 3, 1});                  // a view: no seam
    out = add(b.ctx, r, b.random(Type::F32, {16, 3, 1}));
  }
};

TEST(Scheduler, PlacesByOrderAndSplitsOnlyAtBackendChanges) {
  Fixture f;
  Graph g = build_graph({f.out});
  plan_memory(g, nullptr);
  MatOnly mat;
  cpu::CpuBackend cpu(1);
  const std::vector<Split> splits = Scheduler({&mat, &cpu}).plan(g);
  ASSERT_EQ(splits.size(), 3u);
  EXPECT_EQ(splits[0].backend, &cpu);  // RMS_NORM, MUL
  EXPECT_EQ(splits[1].backend, &mat);  // MUL_MAT and the RESHAPE after it
  EXPECT_EQ(splits[2].backend, &cpu);  // ADD
  EXPECT_EQ(splits[1].graph.nodes.size(), 2u);
  ASSERT_EQ(splits[1].host_reads.size(), 1u);
  EXPECT_EQ(splits[1].host_reads[0], f.y);  // the ADD reads MUL_MAT's result through the view
  ASSERT_EQ(splits[2].host_reads.size(), 1u);
  EXPECT_EQ(splits[2].host_reads[0], f.out);  // the caller reads the output
}

TEST(Scheduler, SplitResultsEqualTheCpuAlone) {
  Fixture a, b;  // same seed: same data
  Graph ga = build_graph({a.out}), gb = build_graph({b.out});
  std::vector<std::byte> ma(plan_memory(ga, nullptr) + 64), mb(plan_memory(gb, nullptr) + 64);
  auto align = [](std::vector<std::byte>& m) {
    return m.data() + (64 - reinterpret_cast<uintptr_t>(m.data()) % 64) % 64;
  };
  plan_memory(ga, align(ma));
  plan_memory(gb, align(mb));
  MatOnly mat;
  cpu::CpuBackend cpu(1);
  Scheduler s({&mat, &cpu});
  s.compute(ga);
  cpu.compute(gb);
  EXPECT_EQ(mat.parts, 1);
  EXPECT_EQ(s.last_stats().splits, 3u);
  EXPECT_EQ(s.last_stats().nodes, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(read(*a.out).v, read(*b.out).v);
}

TEST(Scheduler, NamesANodeNoBackendSupports) {
  Fixture f;
  Graph g = build_graph({f.out});
  MatOnly mat;
  try {
    Scheduler({&mat}).plan(g);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no backend supports RMS_NORM"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hart::sched
