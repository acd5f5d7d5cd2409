#include "model/executor.h"

#include <algorithm>

namespace hart {
namespace {

constexpr size_t kArenaAlign = 64;
// Batch shapes whose graphs are kept. A session needs two (its decode step, its prompt chunk);
// the server's engine cycles through a few (decoding k sequences, with or without a prompt
// chunk beside them). A graph is some tens of kilobytes of tensor descriptions.
constexpr size_t kKeptShapes = 8;

uint8_t* align_up(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kArenaAlign - 1) &
                                    ~uintptr_t(kArenaAlign - 1));
}

}  // namespace

Executor::Executor(const Model& m, const kv::SequenceStore& store, int n_ctx, BackendSet backends)
    : model_(m), store_(store), n_ctx_(n_ctx), scheduler_(std::move(backends)) {
  for (const Backend* b : scheduler_.backends()) reuse_after_ = std::max(reuse_after_, b->reuse_after());
}

const ForwardGraph& Executor::forward(const Batch& b, bool hidden_states) {
  for (size_t i = 0; i < kept_.size(); i++) {
    Kept& k = *kept_[i];
    if (k.fg.hidden_states != hidden_states || k.fg.keep_hidden != keep_hidden_ || !k.shape.matches(b)) continue;
    std::rotate(kept_.begin() + ptrdiff_t(i), kept_.begin() + ptrdiff_t(i) + 1, kept_.end());
    write_inputs(k.fg, b);
    scheduler_.compute(k.fg.graph);
    return k.fg;
  }

  auto k = std::make_unique<Kept>(Kept{BatchShape(b), {}});
  k->fg.hidden_states = hidden_states;
  k->fg.keep_hidden = keep_hidden_;
  build_forward(k->fg, model_, store_, b, n_ctx_);
  built_++;
  plan(k->fg.graph);
  if (kept_.size() == kKeptShapes) kept_.erase(kept_.begin());
  kept_.push_back(std::move(k));
  scheduler_.compute(kept_.back()->fg.graph);
  return kept_.back()->fg;
}

void Executor::compute(Graph& g) {
  plan(g);
  scheduler_.compute(g);
}

void Executor::plan(Graph& g) {
  const size_t need = plan_memory(g, nullptr, kArenaAlign, reuse_after_) + kArenaAlign;
  if (arena_size_ < need) {
    // The kept graphs point into the old arena: they go, and are built again when next used.
    kept_.clear();
    arena_.reset(new uint8_t[need]);
    arena_size_ = need;
  }
  plan_memory(g, align_up(arena_.get()), kArenaAlign, reuse_after_);
}

}  // namespace hart
