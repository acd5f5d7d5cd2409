#include "backend/cpu/schedule.h"

#include <algorithm>

#include "backend/cpu/ops/ops.h"

namespace hart::cpu {

double node_cost(const Tensor& node) {
  const Tensor* s0 = node.src[0];
  switch (node.op) {
    case Op::MUL_MAT:  // W (k, n) @ X (k, m): 2 k n m
      return 2.0 * double(s0->ne[0]) * double(s0->ne[1]) * double(node.src[1]->nrows());
    case Op::MUL_MAT_ID:  // each of the n_used * T output rows: a row of an expert (k, n) times X
      return 2.0 * double(s0->ne[0]) * double(s0->ne[1]) * double(node.ne[1] * node.ne[2]);
    case Op::FLASH_ATTN_EXT:  // q (d, heads, tokens) against the keys and values
      return 4.0 * double(s0->nelements()) * double(node.src[1]->ne[2]);
    case Op::PAGED_ATTN:  // each head of each token against its slot list (the index, ~ sum of lists)
      return 4.0 * double(s0->ne[0]) * double(s0->ne[1]) * double(node.src[3]->ne[0]);
    case Op::RWKV_WKV7:        // per token, every head's S x S state read and updated (r, q: (S, H, T));
    case Op::GATED_DELTA_NET:  // at decode that is a MiB of state for a few KiB of output
      return 8.0 * double(s0->ne[0]) * double(node.ne[0]) * double(s0->ne[2]);
    default:  // element-wise work on the smaller of output and first source (SET_ROWS, GET_ROWS)
      return 8.0 * double(s0 ? std::min(node.nelements(), s0->nelements()) : node.nelements());
  }
}

Hazards::Range Hazards::range_of(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data);
  return {p, p + t.nbytes()};
}

bool Hazards::overlaps(const std::vector<Range>& set, Range r) {
  return std::any_of(set.begin(), set.end(), [&](const Range& s) { return s.begin < r.end && r.begin < s.end; });
}

bool Hazards::conflicts(const Tensor& node) const {
  const Range w = range_of(node);
  if (overlaps(writes_, w) || overlaps(reads_, w)) return true;
  for (const Tensor* s : node.src)
    if (s && overlaps(writes_, range_of(*s))) return true;
  return false;
}

void Hazards::record(const Tensor& node) {
  writes_.push_back(range_of(node));
  for (const Tensor* s : node.src)
    if (s) reads_.push_back(range_of(*s));
}

Schedule make_schedule(const std::vector<const Tensor*>& nodes, const Kernels& k, int nth) {
  Schedule s;
  Hazards hazards;
  size_t segment_work = 0;
  uint32_t pieces_before = 0;
  for (const Tensor* node : nodes) {
    const OpImpl& impl = op_impl(node->op);
    // A small node is one piece even if its kernel could work as a team: its barriers would cost
    // more than the split saves.
    const bool big = node_cost(*node) >= kSplitCost;
    const bool team = nth > 1 && big && impl.team && impl.team(*node, k, nth);
    const int pieces = big ? nth : 1;
    const bool wait = !s.steps.empty() && hazards.conflicts(*node);
    if (wait) {
      hazards.clear();
      segment_work = 0;
    }
    hazards.record(*node);
    const size_t work = impl.work_size ? align_up(impl.work_size(*node, k, pieces)) : 0;
    s.steps.push_back(Step{node, pieces, team, wait, pieces_before, segment_work});
    pieces_before += uint32_t(pieces);
    segment_work += work;
    s.work_size = std::max(s.work_size, segment_work);
  }
  return s;
}

}  // namespace hart::cpu
