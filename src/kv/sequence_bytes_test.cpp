// SequenceStore::save / load: a sequence's K/V rows and recurrent cell come back exactly, into
// other slots of the same store or another store of the same layout; bytes of another layout,
// cut short or with a tail, and a store without room are refused, changing nothing.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/error.h"

#include "kv/sequence_state.h"

namespace hart::kv {
namespace {

// A FULL layer, a WINDOW layer of 4 positions and a layer with a recurrent state of 6 floats.
StateLayout layout() {
  StateLayout l;
  l.kv = {{8, Pool::FULL}, {8, Pool::WINDOW}, {}};
  l.window = 4;
  l.recurrent = {{}, {}, {6}};
  return l;
}

// Fills the rows a sequence holds (and its cell) with random values, as a forward pass would.
void fill(SequenceStore& store, const SeqState& s, uint32_t seed) {
  std::mt19937 rng(seed);
  auto rows = [&](Tensor* t, std::span<const int32_t> slots) {
    for (int32_t slot : slots) {
      auto* f = reinterpret_cast<float*>(static_cast<uint8_t*>(t->data) + size_t(slot) * t->nb[1]);
      for (int64_t i = 0; i < t->ne[0]; i++) f[i] = float(rng() % 1000);
    }
  };
  for (Tensor* t : {store.kv().k(0), store.kv().v(0)}) rows(t, std::span(s.full).first(size_t(s.n)));
  for (Tensor* t : {store.kv().k(1), store.kv().v(1)}) rows(t, std::span(s.window).first(size_t(s.n - s.window_begin)));
  rows(store.state(2, 0), std::span(&s.cell_src, 1));
}

SeqState advance(SequenceStore& store, int n) {
  SeqState s;
  for (int step : {n - 2, 1, 1}) {  // a prompt, then two tokens: the window has moved on
    EXPECT_TRUE(store.reserve(s, step));
    store.commit(s, step);
  }
  return s;
}

TEST(SequenceBytes, SaveLoadGivesTheSameRowsInOtherSlots) {
  SequenceStore store(layout(), {64, 16, 4}, Type::F32);
  SeqState a = advance(store, 9);
  fill(store, a, 1);
  std::vector<uint8_t> bytes;
  store.save(a, bytes);

  SequenceStore other(layout(), {64, 16, 4}, Type::F32);
  SeqState spacer = advance(other, 5);  // so b's slots differ from a's
  SeqState b;
  other.load(b, bytes);
  EXPECT_EQ(b.n, 9);
  EXPECT_EQ(b.window_begin, a.window_begin);
  EXPECT_NE(b.full, a.full);
  std::vector<uint8_t> again;
  other.save(b, again);
  EXPECT_EQ(again, bytes);
  // The loaded sequence goes on like any other.
  ASSERT_TRUE(other.reserve(b, 1));
  other.commit(b, 1);
  EXPECT_EQ(b.n, 10);
  other.release(b);
  other.release(spacer);
  EXPECT_EQ(other.n_free(Pool::FULL), 64);
  EXPECT_EQ(other.n_free_cells(), 4);
}

TEST(SequenceBytes, RefusesForeignShortLongBytesAndNoRoom) {
  SequenceStore store(layout(), {64, 16, 4}, Type::F32);
  SeqState a = advance(store, 9);
  std::vector<uint8_t> bytes;
  store.save(a, bytes);
  SeqState b;
  EXPECT_THROW(store.load(b, std::span(bytes).first(bytes.size() - 1)), Error);
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(store.load(b, longer), Error);
  std::vector<uint8_t> junk(bytes.size(), 7);
  EXPECT_THROW(store.load(b, junk), Error);
  SequenceStore f16(layout(), {64, 16, 4}, Type::F16);
  EXPECT_THROW(f16.load(b, bytes), Error);  // rows of another type
  SequenceStore small(layout(), {8, 16, 4}, Type::F32);
  EXPECT_THROW(small.load(b, bytes), Error);  // 9 positions, 8 slots
  EXPECT_EQ(b.n, 0);
  EXPECT_EQ(small.n_free(Pool::FULL), 8);
  EXPECT_EQ(store.n_free(Pool::FULL), 64 - 9);  // the failed loads took nothing
}

}  // namespace
}  // namespace hart::kv
