#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "common/error.h"
#include "graph/graph.h"

namespace hart {
namespace {

struct Arena {
  explicit Arena(size_t n) : p(static_cast<char*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))) {}
  ~Arena() { std::free(p); }
  char* p;
};

// A chain of element-wise nodes with a skip connection: x -> a1 -> a2 -> ... with adds.
std::vector<Tensor*> make_chain(Context& c, Tensor* x, int n) {
  std::vector<Tensor*> t{x};
  for (int i = 0; i < n; i++) {
    Tensor* prev = t.back();
    Tensor* y = i % 3 == 2 ? add(c, prev, t[t.size() - 3]) : scale(c, prev, 0.5f);
    t.push_back(y);
  }
  return t;
}

TEST(PlanMemory, ReusesBuffersAndNeverAliasesLiveOnes) {
  Context c;
  Tensor* x = c.new_tensor(Type::F32, {33, 7});
  x->flags |= kFlagInput;
  std::vector<Tensor*> chain = make_chain(c, x, 20);
  Tensor* sum = add(c, chain.back(), chain[5]);  // keeps chain[5] alive to the end
  Graph g = build_graph({sum});
  const size_t need = plan_memory(g, nullptr);
  size_t total = 0;
  for (Tensor* t : g.nodes) total += (t->nbytes() + 63) / 64 * 64;
  total += (x->nbytes() + 63) / 64 * 64;
  EXPECT_LT(need, total / 3);
  Arena arena(need);
  EXPECT_EQ(plan_memory(g, arena.p), need);
  EXPECT_GE(static_cast<char*>(x->data), arena.p);

  // Replay liveness: a node's buffer must not overlap any buffer still to be read.
  std::map<const Tensor*, size_t> last;
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (Tensor* s : g.nodes[i]->src)
      if (s) last[s] = i;
  auto overlaps = [](const Tensor* a, const Tensor* b) {
    const char* pa = static_cast<const char*>(a->data);
    const char* pb = static_cast<const char*>(b->data);
    return pa < pb + b->nbytes() && pb < pa + a->nbytes();
  };
  for (size_t i = 0; i < g.nodes.size(); i++) {
    Tensor* t = g.nodes[i];
    ASSERT_GE(static_cast<char*>(t->data), arena.p);
    ASSERT_LE(static_cast<char*>(t->data) + t->nbytes(), arena.p + need);
    for (size_t j = 0; j < i; j++)
      if (last[g.nodes[j]] >= i) {
        EXPECT_FALSE(overlaps(t, g.nodes[j])) << i << " vs " << j;
      }
    EXPECT_FALSE(overlaps(t, x));
  }
}

// reuse_after = k: a node's buffer overlaps no buffer whose last reader ran fewer than k nodes
// before it (a backend running nearby nodes together sees no false dependency), and reuse still
// happens beyond that.
TEST(PlanMemory, ReuseAfterKeepsRecentlyReadBuffers) {
  for (size_t k : {1u, 3u, 6u}) {
    Context c;
    Tensor* x = c.new_tensor(Type::F32, {33, 7});
    x->flags |= kFlagInput;
    std::vector<Tensor*> chain = make_chain(c, x, 40);
    Graph g = build_graph({chain.back()});
    const size_t need = plan_memory(g, nullptr, 64, k);
    EXPECT_GT(need, plan_memory(g, nullptr)) << k;
    Arena arena(need);
    EXPECT_EQ(plan_memory(g, arena.p, 64, k), need);
    std::map<const Tensor*, size_t> last;
    for (size_t i = 0; i < g.nodes.size(); i++)
      for (Tensor* s : g.nodes[i]->src)
        if (s) last[s] = i;
    size_t reused = 0;
    for (size_t i = 0; i < g.nodes.size(); i++)
      for (size_t j = 0; j < i; j++) {
        const char* a = static_cast<const char*>(g.nodes[i]->data);
        const char* b = static_cast<const char*>(g.nodes[j]->data);
        if (!(a < b + g.nodes[j]->nbytes() && b < a + g.nodes[i]->nbytes())) continue;
        reused++;
        EXPECT_GE(i, last[g.nodes[j]] + k) << "node " << i << " took node " << j << "'s memory early (k " << k << ")";
      }
    EXPECT_GT(reused, 0u) << k;
  }
}

TEST(PlanMemory, ViewsKeepTheirOwnerAlive) {
  Context c;
  Tensor* x = c.new_tensor(Type::F32, {64, 4});
  x->flags |= kFlagInput;
  Tensor* big = scale(c, x, 2.0f);                    // owner
  Tensor* part = view(c, big, {64, 2}, {256}, 256);   // read much later
  Tensor* x2 = c.new_tensor(Type::F32, {64, 2});
  x2->flags |= kFlagInput;
  Tensor* y = scale(c, x2, 3.0f);
  Tensor* z = scale(c, y, 3.0f);
  Tensor* w = scale(c, z, 3.0f);
  Tensor* out = add(c, part, w);  // src0 first: big is computed before the y, z, w chain
  Graph g = build_graph({out});
  Arena arena(plan_memory(g, nullptr));
  plan_memory(g, arena.p);
  ASSERT_EQ(g.nodes[0], big);
  EXPECT_EQ(part->data, static_cast<char*>(big->data) + 256);
  for (Tensor* t : {y, z, w, out}) {
    SCOPED_TRACE(op_name(t->op));
    const char* p = static_cast<const char*>(t->data);
    const char* b = static_cast<const char*>(big->data);
    EXPECT_TRUE(p + t->nbytes() <= b || b + big->nbytes() <= p);
  }
}

TEST(PlanMemory, OutputsAndLeafDataAreUntouched) {
  Context c;
  std::vector<float> wmem(16 * 16);
  const int64_t ne[] = {16, 16};
  Tensor* w = c.new_leaf(Type::F32, ne, wmem.data());
  Tensor* x = c.new_tensor(Type::F32, {16, 2});
  x->flags |= kFlagInput;
  Tensor* h1 = mul_mat(c, w, x);
  Tensor* h2 = scale(c, h1, 2.0f);
  Tensor* h3 = scale(c, h2, 2.0f);
  Tensor* h4 = scale(c, h3, 2.0f);
  Graph g = build_graph({h4, h1});
  Arena arena(plan_memory(g, nullptr));
  plan_memory(g, arena.p);
  EXPECT_EQ(w->data, wmem.data());
  auto apart = [](const Tensor* a, const Tensor* b) {
    const char* pa = static_cast<const char*>(a->data);
    const char* pb = static_cast<const char*>(b->data);
    return pa + a->nbytes() <= pb || pb + b->nbytes() <= pa;
  };
  for (Tensor* t : {h2, h3, h4}) {
    EXPECT_TRUE(apart(t, h1));  // h1 is an output: never reused
    EXPECT_TRUE(apart(t, x));   // inputs neither
  }
  EXPECT_TRUE(apart(h4, h3));
  EXPECT_THROW(plan_memory(g, arena.p + 1), Error);
}

}  // namespace
}  // namespace hart
