// SequenceStore: what a sequence holds of each pool as it advances, what it gives back, and when
// it can (and cannot) go back to an earlier position.
#include "kv/sequence_state.h"

#include <gtest/gtest.h>

#include <set>

namespace hart::kv {
namespace {

// Two layers: one attends everything (FULL), one a window of 4 positions (WINDOW); optionally a
// third with a recurrent state of 6 floats.
StateLayout layout(bool recurrent) {
  StateLayout l;
  l.kv = {{8, Pool::FULL}, {8, Pool::WINDOW}};
  l.window = 4;
  l.recurrent = {{}, {}};
  if (recurrent) {
    l.kv.push_back({});
    l.recurrent.push_back({6});
  }
  return l;
}

TEST(SequenceStore, WindowSlotsStayBounded) {
  SequenceStore store(layout(false), {64, 16, 0}, Type::F32);
  SeqState s;
  for (int step = 0; step < 20; step++) {
    const int n = step == 0 ? 7 : 1;  // a prompt of 7, then one token per step
    ASSERT_TRUE(store.reserve(s, n));
    // Every position the step computes attends the 3 before it: those slots are still held.
    EXPECT_LE(s.window_begin, std::max(0, s.n - 3));
    EXPECT_EQ(s.window_begin + int(s.window.size()), s.n + n);
    store.commit(s, n);
    EXPECT_EQ(int(s.full.size()), s.n);
    EXPECT_LE(int(s.window.size()), 3) << "at position " << s.n;  // what the next token attends
  }
  EXPECT_EQ(store.n_free(Pool::FULL), 64 - 26);
  EXPECT_EQ(store.n_free(Pool::WINDOW), 16 - 3);
  store.release(s);
  EXPECT_EQ(store.n_free(Pool::FULL), 64);
  EXPECT_EQ(store.n_free(Pool::WINDOW), 16);
}

// A context shift forgets [keep, keep + n_discard) and numbers the rest down: the FULL slots of
// the later positions stay (listed as moved, in order), the forgotten ones are free again; the
// window's part in the range goes, what it held later moves down, and its list stays contiguous.
TEST(SequenceStore, ShiftForgetsARangeAndMovesTheRestDown) {
  SequenceStore store(layout(true), {64, 16, 1}, Type::F32);
  SeqState s;
  ASSERT_TRUE(store.reserve(s, 12));
  store.commit(s, 12);  // the window holds positions 9, 10, 11
  const std::vector<int32_t> full = s.full, window = s.window;
  const int32_t cell = s.cell;
  std::vector<int32_t> moved[kPools];
  EXPECT_FALSE(store.shift(s, 8, 5, moved));  // past the end
  EXPECT_FALSE(store.shift(s, 3, 0, moved));
  ASSERT_TRUE(store.shift(s, 3, 5, moved));
  EXPECT_EQ(s.n, 7);
  EXPECT_EQ(s.full, std::vector<int32_t>({full[0], full[1], full[2], full[8], full[9], full[10], full[11]}));
  EXPECT_EQ(moved[0], std::vector<int32_t>(full.begin() + 8, full.end()));
  EXPECT_EQ(store.n_free(Pool::FULL), 64 - 7);
  EXPECT_EQ(s.window_begin, 4);  // positions 9..11 are now 4..6, the window's slots unchanged
  EXPECT_EQ(s.window, window);
  EXPECT_EQ(moved[1], window);
  EXPECT_EQ(s.cell, cell);  // the recurrent state stays

  // A range through the window: its part there is freed, the rest stays contiguous.
  for (auto& m : moved) m.clear();
  ASSERT_TRUE(store.shift(s, 1, 4, moved));  // positions 1..4 go: the window's 4
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.window_begin, 1);
  EXPECT_EQ(s.window, std::vector<int32_t>({window[1], window[2]}));
  EXPECT_EQ(store.n_free(Pool::WINDOW), 16 - 2);
  EXPECT_EQ(moved[0], std::vector<int32_t>({full[10], full[11]}));
  ASSERT_TRUE(store.reserve(s, 1));  // and the sequence goes on from position 3
  store.commit(s, 1);
  EXPECT_EQ(int(s.full.size()), 4);
  store.release(s);
  EXPECT_EQ(store.n_free(Pool::FULL), 64);
  EXPECT_EQ(store.n_free(Pool::WINDOW), 16);
}

TEST(SequenceStore, ReserveTakesNothingWhenAPoolIsShort) {
  SequenceStore store(layout(false), {64, 5, 0}, Type::F32);
  SeqState s;
  EXPECT_FALSE(store.reserve(s, 6));  // 6 window slots at once
  EXPECT_TRUE(s.full.empty());
  EXPECT_EQ(store.n_free(Pool::FULL), 64);
  ASSERT_TRUE(store.reserve(s, 5));
  store.commit(s, 5);
  EXPECT_TRUE(store.reserve(s, 2));  // 3 held + 2
}

TEST(SequenceStore, SlotsAreDistinctAcrossSequences) {
  SequenceStore store(layout(false), {40, 40, 0}, Type::F32);
  SeqState a, b;
  for (int i = 0; i < 10; i++) {
    ASSERT_TRUE(store.reserve(a, 2));
    store.commit(a, 2);
    ASSERT_TRUE(store.reserve(b, 1));
    store.commit(b, 1);
  }
  std::set<int32_t> full(a.full.begin(), a.full.end()), window(a.window.begin(), a.window.end());
  for (int32_t x : b.full) EXPECT_TRUE(full.insert(x).second);
  for (int32_t x : b.window) EXPECT_TRUE(window.insert(x).second);
}

TEST(SequenceStore, TruncateWithinTheWindowOnly) {
  SequenceStore store(layout(false), {64, 16, 0}, Type::F32);
  SeqState s;
  ASSERT_TRUE(store.reserve(s, 10));
  store.commit(s, 10);  // window slots of positions 7..9 are held
  EXPECT_FALSE(store.truncate(s, 6));  // position 6 attends 3..5: freed
  EXPECT_EQ(s.n, 10);
  EXPECT_FALSE(store.truncate(s, 9));  // attends 6..8: 6 is gone too
  EXPECT_TRUE(store.truncate(s, 10));  // nothing to forget
  EXPECT_EQ(s.n, 10);
}

TEST(SequenceStore, TruncateKeepsThePrefix) {
  SequenceStore store(layout(false), {64, 16, 0}, Type::F32);
  SeqState s;
  ASSERT_TRUE(store.reserve(s, 2));
  store.commit(s, 2);
  ASSERT_TRUE(store.reserve(s, 1));
  store.commit(s, 1);  // positions 0..2; window holds all three
  EXPECT_TRUE(store.truncate(s, 1));
  EXPECT_EQ(s.n, 1);
  EXPECT_EQ(s.full.size(), 1u);
  EXPECT_EQ(store.n_free(Pool::FULL), 63);
  EXPECT_EQ(store.n_free(Pool::WINDOW), 15);
  EXPECT_TRUE(store.truncate(s, 0));
  EXPECT_EQ(store.n_free(Pool::FULL), 64);
}

TEST(SequenceStore, RecurrentStateReadsZerosFirstThenItsOwnCell) {
  SequenceStore store(layout(true), {64, 16, 2}, Type::F32);
  ASSERT_NE(store.state(2, 0), nullptr);
  EXPECT_EQ(store.state(2, 0)->ne[0], 6);
  EXPECT_EQ(store.state(2, 0)->ne[1], 3);  // the zero cell and two
  SeqState a, b, c;
  ASSERT_TRUE(store.reserve(a, 3));
  EXPECT_EQ(a.cell_src, SequenceStore::kZeroCell);
  EXPECT_GT(a.cell, 0);
  store.commit(a, 3);
  EXPECT_EQ(a.cell_src, a.cell);
  ASSERT_TRUE(store.reserve(b, 1));
  EXPECT_NE(b.cell, a.cell);
  EXPECT_FALSE(store.reserve(c, 1));  // no third cell
  EXPECT_FALSE(store.truncate(a, 2));  // a recurrent state cannot go back
  EXPECT_TRUE(store.truncate(a, 0));   // but can start over
  EXPECT_TRUE(store.reserve(c, 1));
}

TEST(SequenceStore, SharedPrefixIsNotFreed) {
  SequenceStore store(layout(false), {16, 16, 0}, Type::F32);
  SeqState owner;
  ASSERT_TRUE(store.reserve(owner, 4));
  store.commit(owner, 4);
  // A second sequence starting from the owner's first 4 positions (as the prefix cache does).
  SeqState s;
  s.full = owner.full;
  s.window = owner.window;
  s.window_begin = owner.window_begin;
  s.n = s.n_shared = 4;
  ASSERT_TRUE(store.reserve(s, 4));
  store.commit(s, 4);
  store.release(s);
  EXPECT_EQ(store.n_free(Pool::FULL), 12);  // the owner's 4 stay taken
  EXPECT_EQ(store.n_free(Pool::WINDOW), 16 - int(owner.window.size()));
}

}  // namespace
}  // namespace hart::kv
