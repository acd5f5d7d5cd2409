#include "grammar/tokenizer_vocab.h"

namespace hart::grammar {

std::unique_ptr<VocabTrie> vocab_trie_for(const Tokenizer& tok) {
  std::vector<std::string> pieces(size_t(tok.n_vocab()));
  std::vector<bool> eog(pieces.size());
  for (int32_t id = 0; id < tok.n_vocab(); id++) {
    pieces[size_t(id)] = tok.token_to_piece(id);  // "" for control tokens: never grammar text
    eog[size_t(id)] = tok.is_eog(id);
  }
  return std::make_unique<VocabTrie>(pieces, std::move(eog));
}

}  // namespace hart::grammar
