// The prefix cache: a radix tree over token ids whose nodes own the KV slots of those tokens, so
// a request whose prompt starts like an earlier one reuses its K/V instead of recomputing them.
//
// Each token owns a FULL-pool slot and, for models with sliding-window layers, a WINDOW-pool slot
// or none (-1): sequences free window slots that leave their window, so the tree only holds those
// a sequence still had when it handed its tokens over (the last window - 1 positions of a prompt or
// of a finished request). A match is therefore cut back to the longest prefix whose last
// window - 1 positions all have window slots: only there can a new request continue.
//
// For models with recurrent layers, a node may also own a state cell: a snapshot of the state
// after its last token (sequences hand over the cell they just wrote, then continue in a new
// one). A cell holds one position's state only, so a match is cut back further, to the deepest
// node end with a snapshot (the root: the zero state).
//
// A running request locks the path to its deepest node (reference counts up to the root);
// locked slots are never evicted. When a pool runs short, evict() frees the least recently
// used unlocked leaves (a parent becomes a leaf, and a candidate, once its children are gone).
// Every slot is either free in its SlotPool, owned by exactly one tree node, or owned by a
// request that has not inserted it yet.
//
// K/V computed with other weights are other K/V: the tree has one root per namespace (requests
// under different LoRA adapter scales, serve/engine.h), and a prefix matches only within its own.
// Namespace 0 is the base weights'; the others' roots appear on first use. Eviction is global.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/slot_pool.h"

namespace hart::kv {

class RadixCache {
 public:
  struct Node {
    std::vector<int32_t> tokens;   // the edge from the parent
    std::vector<int32_t> slots;    // FULL slot of each token (empty: no FULL pool)
    std::vector<int32_t> window;   // WINDOW slot of each token, -1 for none (empty: no window pool)
    Node* parent = nullptr;
    std::unordered_map<int32_t, std::unique_ptr<Node>> children;  // by first token
    int32_t cell = -1;             // recurrent state after the last token, or -1
    int lock = 0;                  // requests whose path runs through here
    uint64_t last_use = 0;
  };

  struct Match {
    Node* node;                   // deepest node of the match (the root when nothing matched)
    size_t n;                     // tokens matched
    std::vector<int32_t> slots;   // FULL slots of the matched tokens, in order
    std::vector<int32_t> window;  // their WINDOW slots (-1 where none); empty without a window pool
    int32_t cell = 0;             // with a cell pool: the state after the match (0: the zero state)
  };

  // window_pool / window: the WINDOW pool and the positions a window layer attends (itself
  // included), or nullptr / 0 for models without sliding-window layers.
  // pool: the FULL pool, or nullptr for models without full attention (RWKV: tokens own no slots).
  // cell_pool: the recurrent state cells (cell c is slot c; slot 0 the zero state), or nullptr.
  explicit RadixCache(SlotPool* pool, SlotPool* window_pool = nullptr, int window = 0, SlotPool* cell_pool = nullptr);
  ~RadixCache();

  using Namespace = uint32_t;

  // The longest cached prefix of `tokens` a request can continue from. A match ending inside a
  // node splits it, so the returned node covers exactly the match. Marks the path as used now.
  Match match_prefix(std::span<const int32_t> tokens, Namespace ns = 0);

  // Adds tokens with their slots (slots[i] holds the K/V of tokens[i]; window[i] its window
  // K/V or -1, when the cache has a window pool). Where the tree already has a prefix, the
  // caller's duplicate slots go back to their pool and are replaced by the tree's (a window slot
  // the tree lacks is taken over); the tree owns every slot of both afterwards. Returns the node
  // of the last token. cell (with a cell pool): the state after the last token; the tree takes
  // it (setting *cell to -1) unless that node has a snapshot already.
  Node* insert(std::span<const int32_t> tokens, std::vector<int32_t>& slots, std::vector<int32_t>* window = nullptr,
               int32_t* cell = nullptr, Namespace ns = 0);

  void lock(Node* node);
  void unlock(Node* node);

  // Frees at least n FULL slots, n_window WINDOW slots and n_cells cells by evicting unlocked
  // leaves, least recently used first, when there are that many. Returns the FULL slots freed.
  int32_t evict(int32_t n, int32_t n_window = 0, int32_t n_cells = 0);
  // Frees what only the path of `tokens` holds: its deepest node whose tokens all lie in them,
  // then each ancestor that becomes an unlocked leaf (a prefix another path shares stays).
  // Returns the tokens freed.
  int32_t drop(std::span<const int32_t> tokens, Namespace ns = 0);

  int32_t cached() const { return cached_; }        // tokens in the tree (FULL slots it owns)
  int32_t evictable() const { return evictable_; }  // of those, in unlocked nodes
  int32_t evictable_window() const { return evictable_window_; }  // WINDOW slots in unlocked nodes
  int32_t evictable_cells() const { return evictable_cells_; }    // snapshot cells in unlocked nodes
  const Node& root(Namespace ns = 0) { return root_of(ns); }

 private:
  Node* split(Node* child, size_t at);
  // The node that ends exactly after tokens[0, n), which the tree holds (splitting one).
  Node* node_at(Node* root, std::span<const int32_t> tokens, size_t n);
  Node& root_of(Namespace ns);
  static bool is_root(const Node* node) { return node->parent == nullptr; }
  void touch(Node* node);
  // Gives an unlocked leaf's slots back and removes it: its tokens, window slots, cells freed.
  struct Freed {
    int32_t tokens = 0, window = 0, cells = 0;
  };
  Freed remove_leaf(Node* leaf);

  SlotPool* pool_;
  SlotPool* window_pool_;
  int window_;
  SlotPool* cell_pool_;
  std::map<Namespace, Node> roots_;  // a map's nodes stay where they are
  uint64_t clock_ = 0;
  int32_t cached_ = 0;
  int32_t evictable_ = 0;
  int32_t evictable_window_ = 0;
  int32_t evictable_cells_ = 0;
};

}  // namespace hart::kv
