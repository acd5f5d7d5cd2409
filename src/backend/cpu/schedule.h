// How the CPU backend walks a graph with its threads.
//
// Each node is cut into pieces: one for a small node (a split would cost more than it saves),
// else one per thread. A graph of small nodes only runs on the calling thread. Any thread may compute any piece, claiming it from the node's counter,
// so a thread that the OS has descheduled (the machine is shared) is simply left out instead of
// holding everyone at a barrier: the others take its pieces. Nodes whose kernel meets at
// barriers (OpImpl::team) are computed by every thread, one piece each.
//
// Threads wait only where a node touches memory that an earlier unfinished node writes (or
// writes memory one reads), and then only until every piece before it has finished:
// independent nodes (the q, k, v projections of one input; gate and up) run back to back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/cpu/kernels.h"
#include "graph/tensor.h"

namespace hart::cpu {

struct Step {
  const Tensor* node;
  int pieces;             // 1, or the thread count
  bool team;              // every thread computes its own piece (ith = thread index)
  bool wait_before;       // wait until every piece of every earlier step has finished
  uint32_t pieces_before; // pieces of all earlier steps
  size_t work_offset;     // this step's part of the work buffer (steps between waits may overlap in time)
};

struct Schedule {
  std::vector<Step> steps;
  size_t work_size = 0;  // bytes of work buffer the steps need
};

// `nodes`: the graph's nodes that have a kernel, in order.
Schedule make_schedule(const std::vector<const Tensor*>& nodes, const Kernels& k, int nth);

// Estimated arithmetic of a node, for the one-piece-or-split choice.
double node_cost(const Tensor& node);
// Nodes below this cost are one piece.
constexpr double kSplitCost = 1 << 17;

// Memory the steps since the last wait touch, as byte ranges.
class Hazards {
 public:
  // Would `node` (reading its sources, writing itself) race with the recorded steps?
  bool conflicts(const Tensor& node) const;
  void record(const Tensor& node);
  void clear() { reads_.clear(), writes_.clear(); }

 private:
  struct Range {
    const char* begin;
    const char* end;
  };
  static Range range_of(const Tensor& t);
  static bool overlaps(const std::vector<Range>& set, Range r);
  std::vector<Range> reads_, writes_;
};

}  // namespace hart::cpu
