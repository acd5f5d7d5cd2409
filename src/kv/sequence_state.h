// What every sequence of one model carries from one step to the next, behind one interface:
//  - paged K/V (KvCache): a FULL-pool slot per position for layers that attend the whole
//    sequence; sliding-window layers keep only the positions still inside their window, in the
//    WINDOW pool, and free the rest as the sequence advances, so their memory stays bounded;
//  - fixed-size state (recurrent layers: short-conv, RWKV, DeltaNet state): one cell per
//    sequence, whatever its length, in per-layer tensors of `cells` columns.
// A step reads a sequence's state from `cell_src` and writes it to `cell`; cell 0 is never
// written and holds zeros, the state before the first token.
//
// Who owns a slot: the store's pools (free), one sequence, or the prefix cache (src/kv/
// radix_cache.h), which owns the positions [0, n_shared) a sequence was started from.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "kv/kv_cache.h"
#include "kv/slot_pool.h"

namespace hart::kv {

struct StateLayout {
  std::vector<KvLayer> kv;  // one per model layer
  int window = 0;           // positions a WINDOW-pool layer attends, itself included
  // One per model layer: the floats per sequence of each part of its state (empty: none).
  std::vector<std::vector<int64_t>> recurrent;

  bool uses(Pool p) const;
  bool has_recurrent() const;
};

// How many slots of each pool and state cells (besides the zero cell) a store holds.
struct Capacity {
  int64_t full = 0, window = 0, cells = 0;
};

// One sequence's hold on the store. Positions [0, n) are computed.
struct SeqState {
  int n = 0;
  int n_shared = 0;             // positions [0, n_shared) are owned by the prefix cache
  std::vector<int32_t> full;    // FULL slot of position p (every position taken so far)
  std::vector<int32_t> window;  // WINDOW slot of position window_begin + i
  int window_begin = 0;
  // After a context shift: the window holds nothing below this position, though the next ones
  // would attend it (what it had dropped before the shift); they attend what it holds, as
  // llama.cpp's SWA cache does.
  int window_from = 0;
  int32_t cell = -1;            // the cell its steps write; -1: not taken yet
  int32_t cell_src = 0;         // the cell its next step reads
  int32_t cell_spare = -1;      // a second cell it owns, for steps that keep the state before them

  int32_t window_slot(int pos) const { return window[size_t(pos - window_begin)]; }
};

class SequenceStore {
 public:
  static constexpr int32_t kZeroCell = 0;

  SequenceStore(StateLayout layout, Capacity cap, Type kv_type);

  const StateLayout& layout() const { return layout_; }
  const KvCache& kv() const { return kv_; }
  Capacity capacity() const { return cap_; }
  // F32 (floats, 1 + cells): part `part` of layer il's state; nullptr for a layer without one.
  Tensor* state(int il, int part) const { return states_[size_t(il)][size_t(part)]; }

  // Takes what positions [s.n, s.n + n) need that s does not hold yet: FULL and WINDOW slots,
  // a cell. False, and nothing taken, when a pool is short.
  bool reserve(SeqState& s, int n);
  // Those positions were computed: frees the WINDOW slots that left the window (keeping what
  // the next position attends; not with `slide_window` false, for positions that may be given
  // back) and makes the written cell the one the next step reads.
  void commit(SeqState& s, int n, bool slide_window = true);
  // Frees the WINDOW slots the next position no longer attends (what commit does by default).
  void slide_window(SeqState& s);
  // Forgets positions >= n, keeping [0, n): returns false (and changes nothing) when the state
  // cannot go back there (a recurrent state, or WINDOW slots already freed).
  bool truncate(SeqState& s, int n);
  // Before a step some of whose tokens may be taken back (speculative verification): makes the
  // step write a cell other than the one it reads, so the state before the step survives it (a
  // checkpoint at no copy). The sequence then owns two cells, swapped at every such step. False,
  // and nothing taken, when no cell is free.
  bool keep_state_before_step(SeqState& s);
  // Gives back the slots reserved for positions >= s.n that no step committed (the tokens of a
  // verification step that were not accepted).
  void drop_uncommitted(SeqState& s);
  // llama.cpp's context shift (seq_rm of [keep, keep + n_discard), then seq_add of -n_discard
  // to every later position): forgets those positions and numbers the later ones n_discard
  // lower. Their FULL and WINDOW slots stay where they are, appended to moved[pool] in position
  // order: their K rows were rotated for the old positions, and the caller rotates them back.
  // A recurrent state is kept as it is: it has taken the forgotten tokens in, as in llama.cpp.
  // False, changing nothing, when the range is not inside [0, s.n) or reaches into the
  // positions shared with the prefix cache.
  bool shift(SeqState& s, int keep, int n_discard, std::vector<int32_t> (&moved)[kPools]);
  // Gives back everything s owns (not what it shares), leaving it empty.
  void release(SeqState& s);
  // A sequence's computed state as bytes (sequence_bytes.cpp): its K/V rows of every position it
  // holds and its recurrent cell, behind a header naming this store's layout. Appended to `out`.
  // Reads the host copy of the state: a backend that keeps the state in its own memory (the ET
  // device) must not be running this store.
  void save(const SeqState& s, std::vector<uint8_t>& out) const;
  // Replaces s (released first) by a saved state. Throws hart::Error, leaving s empty, for
  // bytes that are not a state of this layout and cache type, or when the pools lack room.
  void load(SeqState& s, std::span<const uint8_t> bytes);

  int64_t n_free(Pool p) const { return pools_[int(p)] ? pools_[int(p)]->n_free() : 0; }
  int64_t n_free_cells() const { return cells_ ? cells_->n_free() : 0; }
  SlotPool& pool(Pool p) { return *pools_[int(p)]; }
  SlotPool& cell_pool() { return *cells_; }
  // The most a sequence of n positions, computed in steps of at most `chunk`, holds at once
  // (with `checkpoint`: steps that keep the state before them, keep_state_before_step).
  Capacity need(int n, int chunk, bool checkpoint = false) const;
  size_t bytes() const { return kv_.bytes() + state_bytes_; }

 private:
  void free_window_below(SeqState& s, int pos);

  StateLayout layout_;
  Capacity cap_;
  KvCache kv_;
  Context ctx_;
  std::unique_ptr<float[]> state_mem_;
  size_t state_bytes_ = 0;
  std::vector<std::vector<Tensor*>> states_;
  std::unique_ptr<SlotPool> pools_[kPools];
  std::unique_ptr<SlotPool> cells_;  // slot i is cell i; slot 0, the zero cell, is always taken
};

}  // namespace hart::kv
