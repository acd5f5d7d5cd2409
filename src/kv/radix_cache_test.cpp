#include "kv/radix_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.h"

namespace hart::kv {
namespace {

using Tokens = std::vector<int32_t>;

// Slots the tree holds, counted by walking it.
int32_t tree_slots(const RadixCache::Node& n) {
  int32_t total = int32_t(n.slots.size());
  for (const auto& c : n.children) total += tree_slots(*c.second);
  return total;
}

// Allocates slots for tokens[from..] and inserts the whole sequence, as a finished request does.
RadixCache::Node* insert_new(RadixCache& rc, SlotPool& pool, const Tokens& t, std::vector<int32_t> slots = {}) {
  EXPECT_TRUE(pool.alloc(int32_t(t.size() - slots.size()), slots));
  return rc.insert(t, slots);
}

struct Fixture : ::testing::Test {
  SlotPool pool{64};
  RadixCache rc{&pool};
  // Invariant: every slot is free or owned by the tree (no request holds any between calls).
  void expect_no_leak() {
    EXPECT_EQ(tree_slots(rc.root()), rc.cached());
    EXPECT_EQ(pool.n_free() + rc.cached(), pool.size());
  }
};

TEST_F(Fixture, MatchSplitsANodeWhereTheMatchEnds) {
  insert_new(rc, pool, {1, 2, 3, 4, 5});
  const auto m = rc.match_prefix(Tokens{1, 2, 3, 9});
  ASSERT_EQ(m.slots.size(), 3u);
  EXPECT_EQ(m.node->tokens, (Tokens{1, 2, 3}));
  ASSERT_EQ(m.node->children.size(), 1u);
  EXPECT_EQ(m.node->children.at(4)->tokens, (Tokens{4, 5}));
  // The split kept the slots in order: a full match returns the original five.
  const auto full = rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6});
  EXPECT_EQ(full.slots.size(), 5u);
  EXPECT_EQ(std::vector<int32_t>(full.slots.begin(), full.slots.begin() + 3), m.slots);
  expect_no_leak();
}

TEST_F(Fixture, NoMatchGivesTheRoot) {
  insert_new(rc, pool, {1, 2});
  const auto m = rc.match_prefix(Tokens{7, 1, 2});
  EXPECT_EQ(m.node, &rc.root());
  EXPECT_TRUE(m.slots.empty());
}

TEST_F(Fixture, NamespacesKeepTheirPrefixesApart) {
  std::vector<int32_t> a, b;
  ASSERT_TRUE(pool.alloc(3, a));
  ASSERT_TRUE(pool.alloc(3, b));
  rc.insert(Tokens{1, 2, 3}, a);
  rc.insert(Tokens{1, 2, 3}, b, nullptr, nullptr, 7);  // the same tokens under other weights
  EXPECT_EQ(rc.cached(), 6);                             // both kept: nothing was shared
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3, 4}).slots, a);
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3, 4}, 7).slots, b);
  const auto none = rc.match_prefix(Tokens{1, 2, 3}, 8);
  EXPECT_TRUE(none.slots.empty());
  EXPECT_EQ(none.node, &rc.root(8));
  // Dropping in one namespace leaves the other's path.
  EXPECT_EQ(rc.drop(Tokens{1, 2, 3}, 7), 3);
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3}).slots.size(), 3u);
  // Eviction reaches every namespace's leaves, least recently used first.
  std::vector<int32_t> c;
  ASSERT_TRUE(pool.alloc(2, c));
  rc.insert(Tokens{5, 6}, c, nullptr, nullptr, 7);
  rc.match_prefix(Tokens{5, 6}, 7);  // newer than {1,2,3}
  EXPECT_EQ(rc.evict(3), 3);
  EXPECT_TRUE(rc.match_prefix(Tokens{1, 2, 3}).slots.empty());
  EXPECT_EQ(rc.match_prefix(Tokens{5, 6}, 7).slots, c);
  EXPECT_EQ(rc.evict(2), 2);
  EXPECT_EQ(rc.cached(), 0);
  EXPECT_EQ(pool.n_free(), pool.size());
}

TEST_F(Fixture, InsertSharesThePrefixAndFreesDuplicateSlots) {
  insert_new(rc, pool, {1, 2, 3, 4});
  const auto first = rc.match_prefix(Tokens{1, 2, 3, 4}).slots;
  // A request that computed {1,2,3} itself (it started before the first was cached).
  std::vector<int32_t> slots;
  ASSERT_TRUE(pool.alloc(5, slots));
  const int32_t free_before = pool.n_free();
  rc.insert(Tokens{1, 2, 3, 7, 8}, slots);
  EXPECT_EQ(pool.n_free(), free_before + 3);  // its copies of 1,2,3 went back
  EXPECT_EQ(std::vector<int32_t>(slots.begin(), slots.begin() + 3),
            std::vector<int32_t>(first.begin(), first.begin() + 3));
  EXPECT_EQ(rc.cached(), 6);
  expect_no_leak();
}

TEST_F(Fixture, InsertOfAPrefixEndsInsideANode) {
  insert_new(rc, pool, {1, 2, 3, 4});
  std::vector<int32_t> slots;
  ASSERT_TRUE(pool.alloc(2, slots));
  RadixCache::Node* n = rc.insert(Tokens{1, 2}, slots);
  EXPECT_EQ(n->tokens, (Tokens{1, 2}));
  EXPECT_EQ(rc.cached(), 4);
  expect_no_leak();
}

TEST_F(Fixture, LockedPathsAreNotEvictable) {
  RadixCache::Node* a = insert_new(rc, pool, {1, 2, 3});
  insert_new(rc, pool, {1, 2, 9, 9});  // splits {1,2,3} into {1,2} + {3}
  EXPECT_EQ(rc.evictable(), 5);
  rc.lock(a);  // {3} and {1,2}
  EXPECT_EQ(rc.evictable(), 2);
  EXPECT_EQ(rc.evict(100), 2);  // only {9,9}
  EXPECT_EQ(rc.cached(), 3);
  rc.unlock(a);
  EXPECT_EQ(rc.evictable(), 3);
  EXPECT_THROW(rc.unlock(a), Error);
  EXPECT_EQ(rc.evict(100), 3);
  EXPECT_EQ(rc.cached(), 0);
  expect_no_leak();
}

TEST_F(Fixture, DropFreesOnlyWhatThePathAloneHolds) {
  insert_new(rc, pool, {1, 2, 3, 4});
  insert_new(rc, pool, {1, 2, 7});  // {1,2} is shared now
  RadixCache::Node* other = insert_new(rc, pool, {5, 6});
  rc.lock(other);
  EXPECT_EQ(rc.drop(Tokens{1, 2, 3, 4}), 2);  // {3,4}; {1,2} stays for {7}
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3, 4}).n, 2u);
  EXPECT_EQ(rc.drop(Tokens{1, 2, 3}), 0);   // nothing of it is left past {1,2}, which {7} shares
  EXPECT_EQ(rc.drop(Tokens{5, 6, 8}), 0);   // locked
  EXPECT_EQ(rc.drop(Tokens{1, 2, 7}), 3);   // {7}, then {1,2}, a leaf now
  EXPECT_EQ(rc.drop(Tokens{9}), 0);
  EXPECT_EQ(rc.cached(), 2);
  rc.unlock(other);
  EXPECT_EQ(rc.evictable(), 2);
  expect_no_leak();
}

TEST_F(Fixture, LockSurvivesASplitBelowIt) {
  RadixCache::Node* a = insert_new(rc, pool, {1, 2, 3, 4});
  rc.lock(a);
  rc.match_prefix(Tokens{1, 2});  // splits the locked node
  EXPECT_EQ(rc.evictable(), 0);
  EXPECT_EQ(rc.evict(4), 0);
  rc.unlock(a);
  EXPECT_EQ(rc.evictable(), 4);
  expect_no_leak();
}

TEST_F(Fixture, EvictsLeastRecentlyUsedLeavesFirst) {
  insert_new(rc, pool, {1, 1});
  insert_new(rc, pool, {2, 2});
  insert_new(rc, pool, {3, 3});
  rc.match_prefix(Tokens{1, 1});  // now {2,2} is the oldest, then {3,3}
  EXPECT_EQ(rc.evict(1), 2);
  EXPECT_TRUE(rc.match_prefix(Tokens{2, 2}).slots.empty());
  EXPECT_EQ(rc.match_prefix(Tokens{3, 3}).slots.size(), 2u);  // touches {3,3}: {1,1} is oldest
  EXPECT_EQ(rc.evict(1), 2);
  EXPECT_TRUE(rc.match_prefix(Tokens{1, 1}).slots.empty());
  EXPECT_EQ(rc.match_prefix(Tokens{3, 3}).slots.size(), 2u);
  expect_no_leak();
}

TEST_F(Fixture, AParentBecomesEvictableOnceItsChildrenAreGone) {
  insert_new(rc, pool, {1, 2, 3});
  insert_new(rc, pool, {1, 2, 4});
  EXPECT_EQ(rc.evict(6), 4);  // {3}, {4}, then their parent {1,2}
  EXPECT_EQ(rc.cached(), 0);
  expect_no_leak();
}

TEST_F(Fixture, RandomWorkloadNeverLeaksSlots) {
  std::mt19937 rng(7);
  std::vector<std::pair<RadixCache::Node*, std::vector<int32_t>>> running;
  for (int step = 0; step < 400; step++) {
    if (running.size() < 4 && rng() % 2) {  // start: match, lock, compute the rest
      Tokens t(1 + rng() % 12);
      for (auto& x : t) x = int32_t(rng() % 3);
      auto m = rc.match_prefix(t);
      rc.lock(m.node);
      const int32_t need = int32_t(t.size() - m.slots.size());
      if (pool.n_free() < need) rc.evict(need - pool.n_free());
      if (!pool.alloc(need, m.slots)) {
        rc.unlock(m.node);
        continue;
      }
      RadixCache::Node* n = rc.insert(t, m.slots);
      rc.lock(n);
      rc.unlock(m.node);
      running.push_back({n, t});
    } else if (!running.empty()) {  // finish
      rc.unlock(running.front().first);
      running.erase(running.begin());
    }
    ASSERT_EQ(tree_slots(rc.root()), rc.cached());
    ASSERT_EQ(pool.n_free() + rc.cached(), pool.size());
    ASSERT_LE(rc.evictable(), rc.cached());
  }
  for (auto& r : running) rc.unlock(r.first);
  EXPECT_EQ(rc.evictable(), rc.cached());
  rc.evict(pool.size());
  EXPECT_EQ(pool.n_free(), pool.size());
}

// With sliding-window layers (a window of 4 positions): a token hands over its window slot
// only if its sequence still held it.
struct WindowFixture : ::testing::Test {
  SlotPool pool{64}, windows{64};
  RadixCache rc{&pool, &windows, 4};
  // Inserts t with FULL slots for all and WINDOW slots for the last `held` positions.
  RadixCache::Node* insert_held(const Tokens& t, size_t held) {
    std::vector<int32_t> slots, window(t.size() - held, -1);
    EXPECT_TRUE(pool.alloc(int32_t(t.size()), slots));
    EXPECT_TRUE(windows.alloc(int32_t(held), window));
    return rc.insert(t, slots, &window);
  }
  int32_t tree_windows(const RadixCache::Node& n) {
    int32_t total = int32_t(std::count_if(n.window.begin(), n.window.end(), [](int32_t s) { return s >= 0; }));
    for (const auto& c : n.children) total += tree_windows(*c.second);
    return total;
  }
  void expect_no_leak() {
    EXPECT_EQ(pool.n_free() + rc.cached(), pool.size());
    EXPECT_EQ(windows.n_free() + tree_windows(rc.root()), windows.size());
  }
};

TEST_F(WindowFixture, MatchEndsWhereTheWindowIsHeld) {
  insert_held({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 3);  // window slots of positions 7, 8, 9
  // Continuing after all 10 tokens needs positions 7..9: held.
  const auto all = rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_EQ(all.slots.size(), 10u);
  EXPECT_EQ(all.window.size(), 10u);
  EXPECT_EQ(std::count(all.window.begin(), all.window.end(), -1), 7);
  // After 9 of them it would need position 6, which is gone; so are the ones before: no match.
  const auto nine = rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6, 7, 8, 9, 42});
  EXPECT_TRUE(nine.slots.empty());
  EXPECT_EQ(nine.node, &rc.root());
  expect_no_leak();
}

TEST_F(WindowFixture, ShortSequencesMatchFromTheirStart) {
  insert_held({1, 2, 3}, 3);  // shorter than the window: everything held
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 9}).slots.size(), 2u);
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3, 9}).slots.size(), 3u);
  expect_no_leak();
}

TEST_F(WindowFixture, TheTreeTakesOverWindowSlotsItLacks) {
  insert_held({1, 2, 3, 4, 5, 6}, 0);
  EXPECT_TRUE(rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6}).slots.empty());
  insert_held({1, 2, 3, 4, 5, 6}, 3);  // the same tokens, with 3..5 held this time
  EXPECT_EQ(rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6, 7}).slots.size(), 6u);
  EXPECT_EQ(rc.evictable_window(), 3);
  expect_no_leak();
  rc.evict(0, 3);
  EXPECT_EQ(windows.n_free(), windows.size());
  expect_no_leak();
}

// Recurrent layers without any KV (RWKV): tokens own no slots, nodes may own state snapshots.
struct CellFixture : ::testing::Test {
  SlotPool cells{16};
  RadixCache rc{nullptr, nullptr, 0, &cells};
  CellFixture() {
    std::vector<int32_t> zero;
    cells.alloc(1, zero);  // cell 0: the zero state
  }
  int32_t snapshot(const Tokens& t) {
    std::vector<int32_t> c, none;
    EXPECT_TRUE(cells.alloc(1, c));
    int32_t cell = c[0];
    rc.insert(t, none, nullptr, &cell);
    EXPECT_EQ(cell, -1);  // taken
    return c[0];
  }
};

TEST_F(CellFixture, MatchEndsAtTheDeepestSnapshot) {
  const int32_t c4 = snapshot({1, 2, 3, 4});
  const int32_t c8 = snapshot({1, 2, 3, 4, 5, 6, 7, 8});
  auto m = rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(m.n, 8u);
  EXPECT_EQ(m.cell, c8);
  m = rc.match_prefix(Tokens{1, 2, 3, 4, 5, 6, 9});  // inside the second node: back to the first
  EXPECT_EQ(m.n, 4u);
  EXPECT_EQ(m.cell, c4);
  m = rc.match_prefix(Tokens{1, 2, 3, 9});
  EXPECT_EQ(m.n, 0u);
  EXPECT_EQ(m.cell, 0);  // the zero state
  EXPECT_EQ(m.node, &rc.root());
}

TEST_F(CellFixture, ASecondSnapshotOfTheSamePrefixStaysWithItsSequence) {
  snapshot({1, 2, 3});
  std::vector<int32_t> c, none;
  ASSERT_TRUE(cells.alloc(1, c));
  int32_t cell = c[0];
  rc.insert(Tokens{1, 2, 3}, none, nullptr, &cell);
  EXPECT_EQ(cell, c[0]);  // not taken: the node has one
  EXPECT_EQ(rc.evictable_cells(), 1);
}

TEST_F(CellFixture, EvictionFreesSnapshotsAndLocksKeepThem) {
  snapshot({1, 2});
  snapshot({1, 2, 3, 4});
  const auto m = rc.match_prefix(Tokens{1, 2, 3, 4, 5});
  rc.lock(m.node);
  EXPECT_EQ(rc.evictable_cells(), 0);
  rc.evict(0, 0, 2);
  EXPECT_EQ(cells.n_free(), 16 - 3);  // both locked (the path runs through the first)
  rc.unlock(m.node);
  EXPECT_EQ(rc.evictable_cells(), 2);
  rc.evict(0, 0, 2);
  EXPECT_EQ(cells.n_free(), 16 - 1);
}

TEST(SlotPool, RejectsDoubleFreeAndOverdraw) {
  SlotPool pool(4);
  std::vector<int32_t> s;
  EXPECT_FALSE(pool.alloc(5, s));
  EXPECT_TRUE(s.empty());
  ASSERT_TRUE(pool.alloc(2, s));
  pool.free(s);
  EXPECT_THROW(pool.free(s), Error);
  EXPECT_THROW(pool.free(std::vector<int32_t>{4}), Error);
  EXPECT_EQ(pool.n_free(), 4);
}

}  // namespace
}  // namespace hart::kv
