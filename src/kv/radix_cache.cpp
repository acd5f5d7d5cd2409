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

}  // namespace

RadixCache::RadixCache(SlotPool& pool) : pool_(pool) { root_.lock = 1; }  // the root is never evicted

RadixCache::~RadixCache() = default;

void RadixCache::touch(Node* node) {
  clock_++;
  for (; node; node = node->parent) node->last_use = clock_;
}

// child's edge becomes child->tokens[0, at) in a new node, with the rest below it.
RadixCache::Node* RadixCache::split(Node* child, size_t at) {
  Node* parent = child->parent;
  auto upper = std::make_unique<Node>();
  upper->tokens.assign(child->tokens.begin(), child->tokens.begin() + long(at));
  upper->slots.assign(child->slots.begin(), child->slots.begin() + long(at));
  upper->parent = parent;
  upper->lock = child->lock;  // every lock through child passes through upper
  upper->last_use = child->last_use;
  child->tokens.erase(child->tokens.begin(), child->tokens.begin() + long(at));
  child->slots.erase(child->slots.begin(), child->slots.begin() + long(at));
  Node* up = upper.get();
  std::unique_ptr<Node>& link = parent->children[up->tokens[0]];
  child = link.release();
  child->parent = up;
  up->children[child->tokens[0]].reset(child);
  link = std::move(upper);
  return up;
}

RadixCache::Match RadixCache::match_prefix(std::span<const int32_t> tokens) {
  Match m{&root_, {}};
  size_t done = 0;
  while (done < tokens.size()) {
    auto it = m.node->children.find(tokens[done]);
    if (it == m.node->children.end()) break;
    Node* child = it->second.get();
    const size_t n = common_prefix(child->tokens, tokens.subspan(done));
    if (n < child->tokens.size()) child = split(child, n);
    m.slots.insert(m.slots.end(), child->slots.begin(), child->slots.end());
    done += n;
    m.node = child;
  }
  touch(m.node);
  return m;
}

RadixCache::Node* RadixCache::insert(std::span<const int32_t> tokens, std::vector<int32_t>& slots) {
  if (slots.size() != tokens.size())
    throw Error("prefix cache: " + std::to_string(slots.size()) + " slots for " + std::to_string(tokens.size()) + " tokens");
  Node* node = &root_;
  size_t done = 0;
  while (done < tokens.size()) {
    auto it = node->children.find(tokens[done]);
    if (it == node->children.end()) {
      auto leaf = std::make_unique<Node>();
      leaf->tokens.assign(tokens.begin() + long(done), tokens.end());
      leaf->slots.assign(slots.begin() + long(done), slots.end());
      leaf->parent = node;
      cached_ += int32_t(leaf->tokens.size());
      evictable_ += int32_t(leaf->tokens.size());
      node = (node->children[tokens[done]] = std::move(leaf)).get();
      break;
    }
    Node* child = it->second.get();
    const size_t n = common_prefix(child->tokens, tokens.subspan(done));
    if (n < child->tokens.size()) child = split(child, n);
    for (size_t i = 0; i < n; i++) {  // already cached: keep the tree's copy
      int32_t& mine = slots[done + i];
      if (mine != child->slots[i]) {
        pool_.free({&mine, 1});
        mine = child->slots[i];
      }
    }
    done += n;
    node = child;
  }
  touch(node);
  return node;
}

void RadixCache::lock(Node* node) {
  for (; node != &root_; node = node->parent)
    if (node->lock++ == 0) evictable_ -= int32_t(node->slots.size());
}

void RadixCache::unlock(Node* node) {
  for (; node != &root_; node = node->parent) {
    if (node->lock <= 0) throw Error("prefix cache: unlocking a node that is not locked");
    if (--node->lock == 0) evictable_ += int32_t(node->slots.size());
  }
}

int32_t RadixCache::evict(int32_t n) {
  auto older = [](const Node* a, const Node* b) { return a->last_use > b->last_use; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(older)> leaves(older);
  std::vector<Node*> stack{&root_};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (auto& entry : node->children) stack.push_back(entry.second.get());
    if (node->children.empty() && node->lock == 0) leaves.push(node);
  }
  int32_t freed = 0;
  while (freed < n && !leaves.empty()) {
    Node* leaf = leaves.top();
    leaves.pop();
    Node* parent = leaf->parent;
    pool_.free(leaf->slots);
    const int32_t size = int32_t(leaf->slots.size());
    freed += size;
    cached_ -= size;
    evictable_ -= size;
    parent->children.erase(leaf->tokens[0]);  // destroys leaf
    if (parent != &root_ && parent->children.empty() && parent->lock == 0) leaves.push(parent);
  }
  return freed;
}

}  // namespace hart::kv
