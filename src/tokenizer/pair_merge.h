// The merge loop SentencePiece and BPE share: split a text into its UTF-8 characters, then
// keep merging the adjacent pair with the highest priority (the leftmost pair on ties) until no
// pair has one. A merged symbol gets new pairs with its neighbours; queued pairs whose sides
// changed since are skipped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "tokenizer/utf8.h"

namespace hart::tok {

// `priority(left, right)` gives the pair's priority (higher merges first) or nullopt when the
// pair cannot merge. Returns the final symbols, in order, as views into `text`.
template <class PriorityFn>
std::vector<std::string_view> merge_pairs(std::string_view text, PriorityFn&& priority) {
  struct Symbol {
    int prev, next;   // neighbours in the chain, -1 at the ends
    size_t start, n;  // bytes of `text`; n == 0 once merged into the left neighbour
  };
  struct Pair {
    int left, right;
    double priority;
    size_t left_n, right_n;  // the sides' sizes when queued
    bool operator<(const Pair& o) const {  // "lower priority than": the queue's top is best
      return priority < o.priority || (priority == o.priority && left > o.left);
    }
  };

  std::vector<Symbol> sym;
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = std::min(utf8_seq_len(static_cast<uint8_t>(text[pos])), text.size() - pos);
    const int i = static_cast<int>(sym.size());
    sym.push_back({i - 1, pos + n == text.size() ? -1 : i + 1, pos, n});
    pos += n;
  }
  const auto view = [&](const Symbol& s) { return text.substr(s.start, s.n); };

  std::priority_queue<Pair> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const std::optional<double> p = priority(view(sym[left]), view(sym[right])))
      queue.push({left, right, *p, sym[left].n, sym[right].n});
  };
  for (int i = 1; i < static_cast<int>(sym.size()); ++i) try_pair(i - 1, i);

  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& l = sym[p.left];
    Symbol& r = sym[p.right];
    if (l.n != p.left_n || r.n != p.right_n) continue;  // a side merged meanwhile
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = p.left;
    try_pair(l.prev, p.left);
    try_pair(p.left, l.next);
  }

  std::vector<std::string_view> out;
  for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) out.push_back(view(sym[i]));
  return out;
}

}  // namespace hart::tok
