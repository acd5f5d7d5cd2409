#include "sched/scheduler.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"

namespace hart::sched {

Scheduler::Scheduler(std::vector<Backend*> backends) : backends_(std::move(backends)) {
  if (backends_.empty()) throw Error("scheduler: no backends given");
  for (Backend* b : backends_)
    if (!b) throw Error("scheduler: null backend");
}

Scheduler::Scheduler(BackendSet backends)
    : owned_(std::make_unique<BackendSet>(std::move(backends))),
      backends_(owned_->backends()),
      log_(owned_->perf_log()) {}

std::vector<Split> Scheduler::plan(const Graph& g) const {
  std::vector<Split> splits;
  std::unordered_map<const Tensor*, size_t> part;  // node -> index of its split
  for (Tensor* n : g.nodes) {
    Backend* b = nullptr;
    if (is_view_op(n->op) && !splits.empty()) {
      b = splits.back().backend;  // views compute nothing: never a seam
    } else {
      for (Backend* cand : backends_) {
        if (cand->supports_op(*n)) {
          b = cand;
          break;
        }
      }
    }
    if (!b) {
      throw Error(std::string("scheduler: no backend supports ") + op_name(n->op) + " node '" + n->name +
                  "' (type " + std::string(type_name(n->src[0] ? n->src[0]->type : n->type)) + ")");
    }
    if (splits.empty() || splits.back().backend != b) splits.push_back(Split{b, {}, {}});
    splits.back().graph.nodes.push_back(n);
    part[n] = splits.size() - 1;
  }

  // A result crosses a seam when a node of another split reads it, or the caller does.
  std::vector<std::unordered_set<Tensor*>> seen(splits.size());
  auto host_read = [&](Tensor* t) {
    Tensor* p = producer(t);
    const auto it = part.find(p);
    if (it == part.end()) return;  // a leaf: the backends handle those themselves
    if (seen[it->second].insert(p).second) splits[it->second].host_reads.push_back(p);
  };
  for (size_t i = 0; i < splits.size(); i++) {
    for (Tensor* n : splits[i].graph.nodes) {
      if (n->flags & kFlagOutput) host_read(n);
      if (is_view_op(n->op)) continue;  // views read nothing
      for (Tensor* s : n->src) {
        if (!s) continue;
        const auto it = part.find(producer(s));
        if (it != part.end() && it->second != i) host_read(s);
      }
    }
  }
  return splits;
}

void Scheduler::compute(const Graph& g) {
  if (backends_.size() == 1) {  // the CPU alone: one part, nothing to place (every decode step)
    stats_.splits = 1;  // assigned in place: a decode step allocates nothing
    stats_.nodes.assign(1, size_t(std::count_if(g.nodes.begin(), g.nodes.end(), [](const Tensor* n) { return !is_view_op(n->op); })));
    backends_[0]->compute(g);
    return;
  }
  const std::vector<Split> splits = plan(g);
  stats_ = Stats{splits.size(), std::vector<size_t>(backends_.size(), 0)};
  for (const Split& s : splits) {
    size_t bi = 0;
    while (backends_[bi] != s.backend) bi++;
    for (const Tensor* n : s.graph.nodes) stats_.nodes[bi] += !is_view_op(n->op);
    if (log_ && bi > 0) {
      std::string ops;
      for (const Tensor* n : s.graph.nodes) {
        if (is_view_op(n->op)) continue;
        if (!ops.empty()) ops += ',';
        ops += op_name(n->op);
      }
      log_->line("SCHED_SPLIT|backend=" + s.backend->name() + "|nodes=" + std::to_string(s.graph.nodes.size()) +
                 "|ops=" + ops);
    }
    s.backend->compute_part(s.graph, s.host_reads);
  }
}

}  // namespace hart::sched
