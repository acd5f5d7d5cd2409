// Runs a model's forward passes on the backends it is handed (a BackendSet the caller opened:
// the CPU alone, or e.g. the ET device with the CPU taking what it cannot). A batch shape's graph
// is compiled once and replayed (the seed's compiled plans per shape): the first batch of a shape
// builds its graph, plans its intermediate tensors into the one arena all graphs share and lets
// the backends derive what they need (the CPU its schedule); a later batch of that shape only
// writes its inputs (tokens, positions, slots, the attention index) into the kept graph. A decode
// step that replays its graph makes no heap allocation. Session (one sequence) and the server's
// engine (many) both run on one.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend_set.h"
#include "model/forward.h"
#include "sched/scheduler.h"

namespace hart {

class Executor {
 public:
  // m and store outlive the executor; n_ctx as for build_forward.
  Executor(const Model& m, const kv::SequenceStore& store, int n_ctx, BackendSet backends);

  // Computes b's forward pass (with hidden_states: the hidden states instead of the logits,
  // ForwardGraph::hidden_states). The graph and its results stay valid until the next call.
  const ForwardGraph& forward(const Batch& b, bool hidden_states = false);
  // From the next forward() on, its graphs also give every token's hidden state
  // (ForwardGraph::keep_hidden).
  void set_keep_hidden(bool keep) { keep_hidden_ = keep; }
  // Computes a graph of other work on the same state (a context shift's K-shift), its
  // intermediate tensors in the arena the forward graphs share. Results of the last forward
  // call are gone afterwards.
  void compute(Graph& g);
  // Where the last graph ran (splits, nodes per backend) and on which backends.
  const sched::Scheduler& scheduler() const { return scheduler_; }
  // Graphs built so far; forward() calls minus this is how many replayed a kept graph.
  size_t graphs_built() const { return built_; }

 private:
  struct Kept {
    BatchShape shape;
    ForwardGraph fg;
  };

  // Lays g's intermediate tensors out in the arena, growing it first (which drops the kept
  // graphs, planned into the old one) when g needs more.
  void plan(Graph& g);

  const Model& model_;
  const kv::SequenceStore& store_;
  const int n_ctx_;
  sched::Scheduler scheduler_;
  size_t reuse_after_ = 0;  // plan_memory's, the most any backend asks for
  std::unique_ptr<uint8_t[]> arena_;
  size_t arena_size_ = 0;
  std::vector<std::unique_ptr<Kept>> kept_;  // most recently used last
  size_t built_ = 0;
  bool keep_hidden_ = false;
};

}  // namespace hart
