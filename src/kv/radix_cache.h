// The prefix cache: a radix tree over token ids whose nodes own the KV slots of those tokens, so
// a request whose prompt starts like an earlier one reuses its K/V instead of recomputing them.
//
// A running request locks the path to its deepest node (reference counts up to the root);
// locked slots are never evicted. When the pool runs short, evict() frees the least recently
// used unlocked leaves (a parent becomes a leaf, and a candidate, once its children are gone).
// Every slot is either free in the SlotPool, owned by exactly one tree node, or owned by a
// request that has not inserted it yet.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/slot_pool.h"

namespace hart::kv {

class RadixCache {
 public:
  struct Node {
    std::vector<int32_t> tokens;  // the edge from the parent
    std::vector<int32_t> slots;   // one per token
    Node* parent = nullptr;
    std::unordered_map<int32_t, std::unique_ptr<Node>> children;  // by first token
    int lock = 0;                 // requests whose path runs through here
    uint64_t last_use = 0;
  };

  struct Match {
    Node* node;                  // deepest node of the match (the root when nothing matched)
    std::vector<int32_t> slots;  // slots of the matched tokens, in order
  };

  explicit RadixCache(SlotPool& pool);
  ~RadixCache();

  // The longest cached prefix of `tokens`. A match ending inside a node splits it, so the
  // returned node covers exactly the match. Marks the path as used now.
  Match match_prefix(std::span<const int32_t> tokens);

  // Adds tokens with their slots (slots[i] holds the K/V of tokens[i]). Where the tree already
  // has a prefix, the caller's duplicate slots go back to the pool and slots[i] is replaced by
  // the tree's; the tree owns every slot of `slots` afterwards. Returns the node of the last token.
  Node* insert(std::span<const int32_t> tokens, std::vector<int32_t>& slots);

  void lock(Node* node);
  void unlock(Node* node);

  // Frees at least n slots by evicting unlocked leaves, least recently used first, when there
  // are that many. Returns the number freed.
  int32_t evict(int32_t n);

  int32_t cached() const { return cached_; }        // slots owned by the tree
  int32_t evictable() const { return evictable_; }  // of those, in unlocked nodes
  const Node& root() const { return root_; }

 private:
  Node* split(Node* child, size_t at);
  void touch(Node* node);

  SlotPool& pool_;
  Node root_;
  uint64_t clock_ = 0;
  int32_t cached_ = 0;
  int32_t evictable_ = 0;
};

}  // namespace hart::kv
