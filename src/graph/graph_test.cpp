#include "graph/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"

namespace hart {
namespace {

size_t index_of(const std::vector<Tensor*>& v, const Tensor* t) {
  return size_t(std::find(v.begin(), v.end(), t) - v.begin());
}

TEST(Tensor, ContiguousStridesAndBytes) {
  Context c;
  Tensor* a = c.new_tensor(Type::F32, {7, 3, 2});
  EXPECT_EQ(a->nb[0], 4u);
  EXPECT_EQ(a->nb[1], 28u);
  EXPECT_EQ(a->nb[2], 84u);
  EXPECT_EQ(a->nbytes(), 168u);
  EXPECT_TRUE(a->is_contiguous());
  Tensor* q = c.new_tensor(Type::Q8_0, {64, 5});
  EXPECT_EQ(q->nb[1], 68u);
  EXPECT_EQ(q->nbytes(), 340u);
  Tensor* t = transpose(c, a);
  EXPECT_FALSE(t->is_contiguous());
  EXPECT_EQ(t->ne[0], 3);
  EXPECT_EQ(t->nb[0], 28u);
  EXPECT_EQ(t->nbytes(), a->nbytes());
  EXPECT_THROW(c.new_tensor(Type::Q4_0, {33}), Error);
}

TEST(Tensor, NameIsFormatted) {
  Context c;
  Tensor* a = c.new_tensor(Type::F32, {4});
  a->set_name("blk.%d.%s", 12, "attn_q");
  EXPECT_STREQ(a->name, "blk.12.attn_q");
  EXPECT_STREQ(op_name(Op::FLASH_ATTN_EXT), "FLASH_ATTN_EXT");
}

TEST(Views, ShareMemoryWithTheirOwner) {
  Context c;
  std::vector<float> mem(6 * 4 * 2);
  const int64_t ne[] = {6, 4, 2};
  Tensor* leaf = c.new_leaf(Type::F32, ne, mem.data());
  Tensor* v = view(c, leaf, {3, 2}, {24}, 8);
  EXPECT_EQ(v->view_src, leaf);
  EXPECT_EQ(v->data, reinterpret_cast<char*>(mem.data()) + 8);
  Tensor* vv = view(c, v, {2}, {}, 4);  // a view of a view points at the owner
  EXPECT_EQ(vv->view_src, leaf);
  EXPECT_EQ(vv->view_offs, 12u);
  EXPECT_EQ(vv->src[0], v);
  Tensor* p = permute(c, leaf, 2, 0, 1, 3);
  EXPECT_EQ(p->ne[0], 4);
  EXPECT_EQ(p->ne[1], 2);
  EXPECT_EQ(p->ne[2], 6);
  EXPECT_EQ(p->nb[2], 4u);
  Tensor* r = reshape(c, leaf, {12, 4});
  EXPECT_TRUE(r->is_contiguous());
  EXPECT_THROW(reshape(c, leaf, {5, 5}), Error);
  EXPECT_THROW(reshape(c, p, {48}), Error);                // not contiguous
  EXPECT_THROW(view(c, leaf, {6, 9}, {24}, 0), Error);     // past the end
  EXPECT_THROW(view(c, leaf, {6, 2}, {24, 48}, 0), Error); // too many strides
  EXPECT_THROW(permute(c, leaf, 0, 0, 1, 2), Error);
}

TEST(Builders, ComputeShapes) {
  Context c;
  Tensor* w = c.new_tensor(Type::Q8_0, {64, 33});
  Tensor* x = c.new_tensor(Type::F32, {64, 7});
  Tensor* y = mul_mat(c, w, x);
  EXPECT_EQ(y->ne[0], 33);
  EXPECT_EQ(y->ne[1], 7);
  EXPECT_EQ(y->type, Type::F32);

  Tensor* ids = c.new_tensor(Type::I32, {5});
  Tensor* rows = get_rows(c, w, ids);
  EXPECT_EQ(rows->ne[0], 64);
  EXPECT_EQ(rows->ne[1], 5);

  Tensor* q = c.new_tensor(Type::F32, {16, 8, 3});
  Tensor* k = c.new_tensor(Type::F16, {16, 2, 10});
  Tensor* v = c.new_tensor(Type::F16, {12, 2, 10});
  Tensor* mask = c.new_tensor(Type::F32, {10, 4});
  Tensor* o = flash_attn_ext(c, q, k, v, mask, 0.25f);
  EXPECT_EQ(o->ne[0], 12);
  EXPECT_EQ(o->ne[1], 8);
  EXPECT_EQ(o->ne[2], 3);
  EXPECT_EQ(o->param_f32(0), 0.25f);

  Tensor* cache = c.new_tensor(Type::F16, {64, 100});
  Tensor* idx = c.new_tensor(Type::I64, {7});
  Tensor* s = set_rows(c, cache, x, idx);
  EXPECT_EQ(s->view_src, cache);
  EXPECT_EQ(s->src[0], cache);
  EXPECT_EQ(s->src[1], x);
  EXPECT_EQ(s->ne[1], 100);

  Tensor* pos = c.new_tensor(Type::I32, {3});
  Tensor* r = rope(c, q, pos, nullptr, RopeMode::NEOX, 16, 10000.0f, 1.0f);
  EXPECT_EQ(r->params[0], int32_t(RopeMode::NEOX));
  EXPECT_EQ(r->params[1], 16);
  EXPECT_EQ(r->param_f32(2), 10000.0f);
}

TEST(Builders, RejectBadShapesAndTypes) {
  Context c;
  Tensor* w = c.new_tensor(Type::F16, {64, 33});
  Tensor* x = c.new_tensor(Type::F32, {65, 7});
  EXPECT_THROW(mul_mat(c, w, x), Error);
  EXPECT_THROW(mul_mat(c, w, c.new_tensor(Type::BF16, {64, 7})), Error);
  EXPECT_THROW(mul_mat(c, c.new_tensor(Type::F32, {64, 2, 3}), c.new_tensor(Type::F32, {64, 2, 4})), Error);
  Tensor* a = c.new_tensor(Type::F32, {6, 4});
  EXPECT_THROW(add(c, a, c.new_tensor(Type::F32, {4, 4})), Error);
  EXPECT_NO_THROW(add(c, a, c.new_tensor(Type::F32, {6, 1})));
  EXPECT_NO_THROW(add(c, a, c.new_tensor(Type::F32, {3, 2})));
  EXPECT_THROW(add(c, transpose(c, a), a), Error);  // strided rows
  EXPECT_THROW(glu(c, a, c.new_tensor(Type::F32, {6, 3}), Glu::SWIGLU), Error);
  EXPECT_THROW(soft_max(c, a, nullptr, 1.0f, -1.0f), Error);
  EXPECT_THROW(soft_max(c, a, c.new_tensor(Type::F32, {6, 3}), 1.0f, 0.0f), Error);
  EXPECT_THROW(get_rows(c, a, c.new_tensor(Type::I64, {2})), Error);
  EXPECT_THROW(rope(c, c.new_tensor(Type::F32, {8, 2, 3}), c.new_tensor(Type::I32, {2}), nullptr,
                    RopeMode::NORMAL, 8, 1e4f, 1.0f),
               Error);
  EXPECT_THROW(rope(c, c.new_tensor(Type::F32, {8, 2, 3}), c.new_tensor(Type::I32, {3}), nullptr,
                    RopeMode::NORMAL, 7, 1e4f, 1.0f),
               Error);
  Tensor* q = c.new_tensor(Type::F32, {16, 6, 3});
  Tensor* k = c.new_tensor(Type::F16, {16, 4, 10});
  EXPECT_THROW(flash_attn_ext(c, q, k, k, nullptr, 1.0f), Error);  // 6 heads over 4 kv heads
  EXPECT_THROW(cpy(c, a, c.new_tensor(Type::F32, {5, 4})), Error);
  EXPECT_THROW(cpy(c, transpose(c, a), c.new_tensor(Type::Q8_0, {32, 1})), Error);
  try {
    mul_mat(c, w, x);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MUL_MAT"), std::string::npos) << e.what();
  }
}

TEST(BuildGraph, TopologicalOrderLeafsAndOutputs) {
  Context c;
  Tensor* w = c.new_tensor(Type::F32, {8, 8});
  Tensor* x = c.new_tensor(Type::F32, {8, 3});
  Tensor* h = mul_mat(c, w, x);
  Tensor* a = add(c, h, x);
  Tensor* n = rms_norm(c, a, 1e-5f);
  Tensor* m = mul(c, n, a);  // a has two users
  Tensor* out2 = scale(c, h, 2.0f);
  Graph g = build_graph({m, out2});
  EXPECT_EQ(g.leafs.size(), 2u);
  ASSERT_EQ(g.nodes.size(), 5u);
  for (Tensor* t : g.nodes)
    for (Tensor* s : t->src)
      if (s && s->op != Op::NONE) {
        EXPECT_LT(index_of(g.nodes, s), index_of(g.nodes, t));
      }
  EXPECT_TRUE(m->flags & kFlagOutput);
  EXPECT_TRUE(out2->flags & kFlagOutput);
  EXPECT_FALSE(a->flags & kFlagOutput);
}

TEST(BuildGraph, ViewsOfSetRowsDependOnIt) {
  Context c;
  Tensor* cache = c.new_tensor(Type::F16, {8, 16});
  Tensor* src = c.new_tensor(Type::F32, {8, 2});
  Tensor* ids = c.new_tensor(Type::I64, {2});
  Tensor* s = set_rows(c, cache, src, ids);
  Tensor* v = view(c, s, {8, 4}, {16}, 0);
  Tensor* out = cont(c, v);
  Graph g = build_graph({out});
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0], s);
  EXPECT_EQ(g.nodes[1], v);
  EXPECT_EQ(v->view_src, cache);
}

}  // namespace
}  // namespace hart
