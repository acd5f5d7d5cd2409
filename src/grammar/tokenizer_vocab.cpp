#include "grammar/tokenizer_vocab.h"

#include <algorithm>

namespace hart::grammar {

std::unique_ptr<VocabTrie> vocab_trie_for(const Tokenizer& tok, const std::vector<int32_t>& shown) {
  std::vector<std::string> pieces(size_t(tok.n_vocab()));
  std::vector<bool> eog(pieces.size());
  for (int32_t id = 0; id < tok.n_vocab(); id++) {
    eog[size_t(id)] = tok.is_eog(id);
    const bool show = !eog[size_t(id)] && std::find(shown.begin(), shown.end(), id) != shown.end();
    pieces[size_t(id)] = tok.token_to_piece(id, show);  // "" for a control token not shown
  }
  return std::make_unique<VocabTrie>(pieces, std::move(eog));
}

}  // namespace hart::grammar
