// The VocabTrie of a model's tokenizer: each token's text as generation emits it.
#pragma once

#include <memory>

#include "grammar/vocab_trie.h"
#include "tokenizer/tokenizer.h"

namespace hart::grammar {

std::unique_ptr<VocabTrie> vocab_trie_for(const Tokenizer& tok);

}  // namespace hart::grammar
