// Memory planning: every tensor the graph computes gets a slice of one arena, and a slice is
// handed to a later tensor once every reader of the first has run.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "graph/graph.h"

namespace hart {
namespace {

// First-fit over a sorted free list that merges neighbours; deterministic, so the sizing pass
// and the placing pass produce the same layout.
class Allocator {
 public:
  explicit Allocator(size_t alignment) : align_(alignment) {}

  size_t alloc(size_t size) {
    size = round_up(std::max<size_t>(size, 1));
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->size < size) continue;
      const size_t offs = it->offs;
      it->offs += size;
      it->size -= size;
      if (it->size == 0) free_.erase(it);
      return offs;
    }
    // Grow the arena; a free block at its end is extended rather than skipped.
    if (!free_.empty() && free_.back().offs + free_.back().size == top_) {
      const size_t offs = free_.back().offs;
      free_.pop_back();
      top_ = offs + size;
      peak_ = std::max(peak_, top_);
      return offs;
    }
    const size_t offs = top_;
    top_ += size;
    peak_ = std::max(peak_, top_);
    return offs;
  }

  void release(size_t offs, size_t size) {
    size = round_up(std::max<size_t>(size, 1));
    auto it = std::lower_bound(free_.begin(), free_.end(), offs,
                               [](const Block& b, size_t o) { return b.offs < o; });
    it = free_.insert(it, Block{offs, size});
    if (it + 1 != free_.end() && it->offs + it->size == (it + 1)->offs) {
      it->size += (it + 1)->size;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->offs + (it - 1)->size == it->offs) {
      (it - 1)->size += it->size;
      free_.erase(it);
    }
  }

  size_t peak() const { return peak_; }

 private:
  struct Block {
    size_t offs, size;
  };
  size_t round_up(size_t n) const { return (n + align_ - 1) / align_ * align_; }

  size_t align_;
  size_t top_ = 0, peak_ = 0;
  std::vector<Block> free_;
};

Tensor* owner(Tensor* t) { return t->view_src ? t->view_src : t; }

}  // namespace

size_t plan_memory(Graph& g, void* arena, size_t alignment, size_t reuse_after) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    throw Error("plan_memory: alignment " + std::to_string(alignment) + " is not a power of two");
  if (reinterpret_cast<uintptr_t>(arena) % alignment)
    throw Error("plan_memory: arena is not aligned to " + std::to_string(alignment) + " bytes");

  // Tensors needing memory: non-views without data. Only those we place may be released.
  std::unordered_map<Tensor*, size_t> offset;
  auto needs_memory = [&](Tensor* t) { return !t->view_src && !t->data; };

  // Last node (index) that reads each owner; reading a view reads its owner.
  std::unordered_map<Tensor*, size_t> last_use;
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (Tensor* s : g.nodes[i]->src)
      if (s) last_use[owner(s)] = i;
  // Memory the caller reads or writes outside compute is never handed to another tensor.
  auto kept = [](Tensor* t) { return (t->flags & (kFlagOutput | kFlagInput)) != 0; };
  std::unordered_set<Tensor*> keep;
  for (Tensor* t : g.nodes)
    if (kept(t)) keep.insert(owner(t));

  Allocator alloc(alignment);
  auto place = [&](Tensor* t) {
    if (needs_memory(t)) offset[t] = alloc.alloc(t->nbytes());
  };
  // Leafs without data are inputs: placed first and kept for the whole graph.
  for (Tensor* t : g.leafs) place(t);
  std::vector<std::vector<Tensor*>> release_after(g.nodes.size());
  for (Tensor* t : g.nodes)
    if (needs_memory(t) && !keep.count(t) && last_use.count(t))
      release_after[std::min(last_use[t] + reuse_after, g.nodes.size() - 1)].push_back(t);

  for (size_t i = 0; i < g.nodes.size(); i++) {
    place(g.nodes[i]);
    for (Tensor* t : release_after[i])
      if (auto it = offset.find(t); it != offset.end()) alloc.release(it->second, t->nbytes());
  }

  if (arena) {
    char* base = static_cast<char*>(arena);
    for (auto& [t, offs] : offset) t->data = base + offs;
    for (Tensor* t : g.nodes)
      if (t->view_src && t->view_src->data) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
    g.id = new_graph_id();
  }
  return alloc.peak();
}

}  // namespace hart
