// The vocabulary's token texts as a byte trie, built once per model and shared by every
// constrained request: walking it with a Matcher visits a shared prefix once for all tokens
// that start with it, and drops a whole subtree at the first byte the grammar refuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hart::grammar {

class VocabTrie {
 public:
  // pieces[id]: the bytes token id adds to the text ("" for control tokens: never allowed by a
  // grammar); eog[id]: the token ends generation (allowed once the grammar is complete).
  VocabTrie(const std::vector<std::string>& pieces, std::vector<bool> eog);

  // Nodes in preorder: a node's children follow it, and `end` is one past its subtree.
  struct Node {
    uint32_t end;
    uint32_t tokens_begin, tokens_end;  // into tokens(): the tokens whose text ends here
    uint8_t byte;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  const std::string& piece(int32_t id) const { return pieces_[size_t(id)]; }
  bool is_eog(int32_t id) const { return eog_[size_t(id)]; }
  const std::vector<int32_t>& eog_tokens() const { return eog_ids_; }
  int32_t n_vocab() const { return int32_t(pieces_.size()); }

 private:
  std::vector<std::string> pieces_;
  std::vector<bool> eog_;
  std::vector<int32_t> eog_ids_;
  std::vector<Node> nodes_;  // nodes_[0]: the root (the empty prefix; holds no tokens)
  std::vector<int32_t> tokens_;
};

}  // namespace hart::grammar
