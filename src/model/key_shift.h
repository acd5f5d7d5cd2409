// llama.cpp's K-shift, the second half of a context shift: once SequenceStore::shift has
// numbered positions lower, the K rows in the moved slots still hold keys rotated for their old
// positions. RoPE turns each pair of a key by an angle linear in the position, so turning a cached
// key by the shift (a negative number of positions) gives the key of its new position. Each
// layer's keys are turned by that layer's own RoPE, as its forward graph applies it: mode, rotated
// dims, base, scale and frequency factors, without the attention factor (already in the row).
#pragma once

#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/sequence_state.h"
#include "model/forward.h"

namespace hart {

// How a layer's forward graph rotates the keys it caches.
struct KeyRope {
  RopeMode mode;
  int n_dims;
  float freq_base, freq_scale;
  Tensor* freq_factors;  // a weight of the model, or nullptr
  int64_t head_dim, n_head_kv;
  std::string unrepeatable;  // why a shift cannot repeat this rotation; empty when it can
};

// Per layer of fg: its KeyRope, nullopt for a layer without a cache of its own or with unrotated
// keys.
std::vector<std::optional<KeyRope>> key_ropes(const ForwardGraph& fg);
// Throws hart::Error naming the first layer whose rotation a shift cannot repeat.
void check_repeatable(std::span<const std::optional<KeyRope>> ropes);

struct KeyShiftGraph {
  Context ctx;
  Graph graph;
  std::deque<std::vector<int32_t>> i32;  // the inputs' data
  std::deque<std::vector<int64_t>> i64;
};

// Builds into g the graph that turns the K rows at slots moved[pool] of every rotated layer by
// delta positions and writes them back to the cache. False when there is nothing to turn.
bool build_key_shift(KeyShiftGraph& g, const kv::SequenceStore& store, std::span<const std::optional<KeyRope>> ropes,
                     const std::vector<int32_t> (&moved)[kv::kPools], int delta);

}  // namespace hart
