#include "kv/radix_cache.h"

#include <algorithm>
#include <queue>

#include "common/error.h"

namespace hart::kv {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) i++;
  return i;
}

int32_t present(const std::vector<int32_t>& window) {
  return int32_t(std::count_if(window.begin(), window.end(), [](int32_t s) { return s >= 0; }));
}

}  // namespace

RadixCache::RadixCache(SlotPool* pool, SlotPool* window_pool, int window, SlotPool* cell_pool)
    : pool_(pool), window_pool_(window_pool), window_(window), cell_pool_(cell_pool) {
  root_of(0);
}

RadixCache::Node& RadixCache::root_of(Namespace ns) {
  Node& root = roots_[ns];
  root.lock = 1;  // a root is never evicted
  return root;
}

RadixCache::~RadixCache() = default;

void RadixCache::touch(Node* node) {
  clock_++;
  for (; node; node = node->parent) node->last_use = clock_;
}

// child's edge becomes child->tokens[0, at) in a new node, with the rest below it (and its
// snapshot cell, which is the state after child's last token).
RadixCache::Node* RadixCache::split(Node* child, size_t at) {
  Node* parent = child->parent;
  auto upper = std::make_unique<Node>();
  auto cut = [at](std::vector<int32_t>& from, std::vector<int32_t>& to) {
    if (from.empty()) return;
    to.assign(from.begin(), from.begin() + long(at));
    from.erase(from.begin(), from.begin() + long(at));
  };
  cut(child->tokens, upper->tokens);
  cut(child->slots, upper->slots);
  cut(child->window, upper->window);
  upper->parent = parent;
  upper->lock = child->lock;  // every lock through child passes through upper
  upper->last_use = child->last_use;
  Node* up = upper.get();
  std::unique_ptr<Node>& link = parent->children[up->tokens[0]];
  child = link.release();
  child->parent = up;
  up->children[child->tokens[0]].reset(child);
  link = std::move(upper);
  return up;
}

RadixCache::Node* RadixCache::node_at(Node* root, std::span<const int32_t> tokens, size_t n) {
  Node* node = root;
  for (size_t done = 0; done < n;) {
    Node* child = node->children.at(tokens[done]).get();
    const size_t step = std::min(child->tokens.size(), n - done);
    if (step < child->tokens.size()) child = split(child, step);
    done += step;
    node = child;
  }
  return node;
}

RadixCache::Match RadixCache::match_prefix(std::span<const int32_t> tokens, Namespace ns) {
  Node* root = &root_of(ns);
  Match m{root, 0, {}, {}, 0};
  const Node* node = root;
  size_t done = 0;
  std::vector<std::pair<size_t, int32_t>> snapshots = {{0, 0}};  // (position, cell), the root's zero state
  while (done < tokens.size()) {
    auto it = node->children.find(tokens[done]);
    if (it == node->children.end()) break;
    const Node* child = it->second.get();
    const size_t n = common_prefix(child->tokens, tokens.subspan(done));
    if (pool_) m.slots.insert(m.slots.end(), child->slots.begin(), child->slots.begin() + long(n));
    if (window_pool_) m.window.insert(m.window.end(), child->window.begin(), child->window.begin() + long(n));
    done += n;
    if (n < child->tokens.size()) break;
    node = child;
    if (node->cell >= 0) snapshots.emplace_back(done, node->cell);
  }
  // Where a request can continue: the window - 1 positions before it have their window slots,
  // and (recurrent layers) it is a snapshot's position.
  auto window_held = [&](size_t at) {
    for (size_t i = at >= size_t(window_) ? at - size_t(window_) + 1 : 0; i < at; i++)
      if (m.window[i] < 0) return false;
    return true;
  };
  if (cell_pool_) {
    while (snapshots.size() > 1 && (snapshots.back().first > done || (window_pool_ && !window_held(snapshots.back().first))))
      snapshots.pop_back();
    done = snapshots.back().first;
    m.cell = snapshots.back().second;
  } else if (window_pool_) {
    // Back off to the longest end whose window is held: past a missing slot nothing can be.
    for (size_t end = done;;) {
      const size_t from = end >= size_t(window_) ? end - size_t(window_) + 1 : 0;
      size_t missing = end;
      for (size_t i = from; i < end; i++)
        if (m.window[i] < 0) missing = i;
      if (missing == end) {
        done = end;
        break;
      }
      end = missing;
    }
  }
  m.n = done;
  if (pool_) m.slots.resize(done);
  if (window_pool_) m.window.resize(done);
  m.node = node_at(root, tokens, done);
  touch(m.node);
  return m;
}

RadixCache::Node* RadixCache::insert(std::span<const int32_t> tokens, std::vector<int32_t>& slots,
                                     std::vector<int32_t>* window, int32_t* cell, Namespace ns) {
  if ((pool_ && slots.size() != tokens.size()) || (window_pool_ && (!window || window->size() != tokens.size())))
    throw Error("prefix cache: " + std::to_string(slots.size()) + " slots for " + std::to_string(tokens.size()) + " tokens");
  Node* node = &root_of(ns);
  size_t done = 0;
  while (done < tokens.size()) {
    auto it = node->children.find(tokens[done]);
    if (it == node->children.end()) {
      auto leaf = std::make_unique<Node>();
      leaf->tokens.assign(tokens.begin() + long(done), tokens.end());
      if (pool_) leaf->slots.assign(slots.begin() + long(done), slots.end());
      if (window_pool_) leaf->window.assign(window->begin() + long(done), window->end());
      leaf->parent = node;
      cached_ += int32_t(leaf->tokens.size());
      evictable_ += int32_t(leaf->tokens.size());
      evictable_window_ += present(leaf->window);
      node = (node->children[tokens[done]] = std::move(leaf)).get();
      break;
    }
    Node* child = it->second.get();
    const size_t n = common_prefix(child->tokens, tokens.subspan(done));
    if (n < child->tokens.size()) child = split(child, n);
    for (size_t i = 0; i < n; i++) {  // already cached: keep the tree's copy
      if (pool_) {
        int32_t& mine = slots[done + i];
        if (mine != child->slots[i]) {
          pool_->free({&mine, 1});
          mine = child->slots[i];
        }
      }
      if (!window_pool_) continue;
      int32_t& my_window = (*window)[done + i];
      int32_t& theirs = child->window[i];
      if (theirs < 0 && my_window >= 0) {  // the tree takes over a window slot it lacked
        theirs = my_window;
        if (child->lock == 0) evictable_window_++;
      } else if (my_window != theirs) {
        if (my_window >= 0) window_pool_->free({&my_window, 1});
        my_window = theirs;
      }
    }
    done += n;
    node = child;
  }
  if (cell_pool_ && cell && *cell > 0 && !is_root(node) && node->cell < 0) {  // the tree takes the snapshot
    node->cell = *cell;
    *cell = -1;
    if (node->lock == 0) evictable_cells_++;
  }
  touch(node);
  return node;
}

void RadixCache::lock(Node* node) {
  for (; !is_root(node); node = node->parent)
    if (node->lock++ == 0) {
      evictable_ -= int32_t(node->tokens.size());
      evictable_window_ -= present(node->window);
      evictable_cells_ -= node->cell >= 0;
    }
}

void RadixCache::unlock(Node* node) {
  for (; !is_root(node); node = node->parent) {
    if (node->lock <= 0) throw Error("prefix cache: unlocking a node that is not locked");
    if (--node->lock == 0) {
      evictable_ += int32_t(node->tokens.size());
      evictable_window_ += present(node->window);
      evictable_cells_ += node->cell >= 0;
    }
  }
}

int32_t RadixCache::evict(int32_t n, int32_t n_window, int32_t n_cells) {
  auto older = [](const Node* a, const Node* b) { return a->last_use > b->last_use; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(older)> leaves(older);
  std::vector<Node*> stack;
  for (auto& [ns, root] : roots_) stack.push_back(&root);
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (auto& entry : node->children) stack.push_back(entry.second.get());
    if (node->children.empty() && node->lock == 0) leaves.push(node);
  }
  int32_t freed = 0, freed_window = 0, freed_cells = 0;
  while ((freed < n || freed_window < n_window || freed_cells < n_cells) && !leaves.empty()) {
    Node* leaf = leaves.top();
    leaves.pop();
    Node* parent = leaf->parent;
    const Freed f = remove_leaf(leaf);
    freed += f.tokens;
    freed_window += f.window;
    freed_cells += f.cells;
    if (!is_root(parent) && parent->children.empty() && parent->lock == 0) leaves.push(parent);
  }
  return freed;
}

RadixCache::Freed RadixCache::remove_leaf(Node* leaf) {
  Freed f;
  if (pool_) pool_->free(leaf->slots);
  for (int32_t s : leaf->window)
    if (s >= 0) window_pool_->free({&s, 1});
  if (leaf->cell >= 0) {
    cell_pool_->free({&leaf->cell, 1});
    f.cells = 1;
    evictable_cells_--;
  }
  f.tokens = int32_t(leaf->tokens.size());
  f.window = present(leaf->window);
  cached_ -= f.tokens;
  evictable_ -= f.tokens;
  evictable_window_ -= f.window;
  leaf->parent->children.erase(leaf->tokens[0]);  // destroys leaf
  return f;
}

int32_t RadixCache::drop(std::span<const int32_t> tokens, Namespace ns) {
  Node* node = &root_of(ns);
  for (size_t done = 0; done < tokens.size();) {
    const auto it = node->children.find(tokens[done]);
    if (it == node->children.end() || it->second->tokens.size() > tokens.size() - done ||
        !std::equal(it->second->tokens.begin(), it->second->tokens.end(), tokens.begin() + long(done)))
      break;
    done += it->second->tokens.size();
    node = it->second.get();
  }
  int32_t freed = 0;
  while (!is_root(node) && node->children.empty() && node->lock == 0) {
    Node* parent = node->parent;
    freed += remove_leaf(node).tokens;
    node = parent;
  }
  return freed;
}

}  // namespace hart::kv
