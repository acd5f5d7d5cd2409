#include "grammar/vocab_trie.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace hart::grammar {

VocabTrie::VocabTrie(const std::vector<std::string>& pieces, std::vector<bool> eog) : pieces_(pieces), eog_(std::move(eog)) {
  if (eog_.size() != pieces_.size()) throw Error("vocab trie: " + std::to_string(eog_.size()) + " end flags for " + std::to_string(pieces_.size()) + " tokens");
  for (size_t i = 0; i < eog_.size(); i++)
    if (eog_[i]) eog_ids_.push_back(int32_t(i));
  // Sorted texts make the trie in one pass: each text shares with the previous one the path of
  // their common prefix, and opens new nodes below it in preorder.
  std::vector<int32_t> order;
  for (size_t i = 0; i < pieces_.size(); i++)
    if (!pieces_[i].empty() && !eog_[i]) order.push_back(int32_t(i));
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return pieces_[size_t(a)] != pieces_[size_t(b)] ? pieces_[size_t(a)] < pieces_[size_t(b)] : a < b;
  });
  nodes_.push_back({0, 0, 0, 0});
  std::vector<uint32_t> path{0};  // path[d]: the node of the current text's first d bytes
  std::string prev;
  for (int32_t id : order) {
    const std::string& p = pieces_[size_t(id)];
    size_t common = 0;
    while (common < prev.size() && common < p.size() && prev[common] == p[common]) common++;
    for (size_t d = path.size() - 1; d > common; d--) nodes_[path[d]].end = uint32_t(nodes_.size());
    path.resize(common + 1);
    for (size_t d = common; d < p.size(); d++) {
      path.push_back(uint32_t(nodes_.size()));
      nodes_.push_back({0, 0, 0, uint8_t(p[d])});
    }
    Node& leaf = nodes_[path.back()];
    if (leaf.tokens_end == 0) leaf.tokens_begin = uint32_t(tokens_.size());
    tokens_.push_back(id);
    leaf.tokens_end = uint32_t(tokens_.size());
    prev = p;
  }
  for (uint32_t n : path) nodes_[n].end = uint32_t(nodes_.size());
}

}  // namespace hart::grammar
