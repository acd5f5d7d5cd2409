// The VocabTrie of a model's tokenizer: each token's text as generation emits it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "grammar/vocab_trie.h"
#include "tokenizer/tokenizer.h"

namespace hart::grammar {

// Control tokens have no text (a grammar never allows them), except those in `shown`: the
// markers a reply keeps in its text (serve's marker_tokens, such as Mistral's [TOOL_CALLS]),
// which a grammar then matches by that text. End-of-generation tokens stay without text.
std::unique_ptr<VocabTrie> vocab_trie_for(const Tokenizer& tok, const std::vector<int32_t>& shown = {});

}  // namespace hart::grammar
