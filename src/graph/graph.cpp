#include "graph/graph.h"

#include <atomic>
#include <unordered_set>
#include <utility>

namespace hart {

uint64_t new_graph_id() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

Graph build_graph(std::initializer_list<Tensor*> outputs) {
  return build_graph(std::span<Tensor* const>(outputs.begin(), outputs.size()));
}

Graph build_graph(std::span<Tensor* const> outputs) {
  // Iterative post-order DFS (a deep model would overflow a recursive one): a tensor is
  // emitted after all its sources, so node order is a valid execution order.
  Graph g;
  g.id = new_graph_id();
  std::unordered_set<const Tensor*> done;
  std::vector<std::pair<Tensor*, int>> stack;  // tensor, next source to visit
  for (Tensor* out : outputs) {
    out->flags |= kFlagOutput;
    if (done.count(out)) continue;
    stack.emplace_back(out, 0);
    done.insert(out);
    while (!stack.empty()) {
      auto& [t, next] = stack.back();
      if (next < kMaxSrc) {
        Tensor* s = t->src[next++];
        if (s && done.insert(s).second) stack.emplace_back(s, 0);
        continue;
      }
      std::vector<Tensor*>& list = t->op == Op::NONE ? g.leafs : g.nodes;
      // An unnamed tensor is named by its place, as ggml names them ("node_12", "leaf_3").
      if (!t->name[0]) t->set_name("%s_%zu", t->op == Op::NONE ? "leaf" : "node", list.size());
      list.push_back(t);
      stack.pop_back();
    }
  }
  return g;
}

}  // namespace hart
