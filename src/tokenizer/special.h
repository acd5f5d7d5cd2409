// Splitting input text around special tokens before the model's own tokenizer sees it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace hart::tok {

// Either a special token (token != kNoToken) or a run of plain text.
struct Fragment {
  int32_t token = kNoToken;
  std::string_view text;
};

// Finds the texts of special tokens in `text`, longest tokens first (llama.cpp's order), and
// cuts the text around them. USER_DEFINED tokens are always matched; CONTROL and UNKNOWN ones
// only with `parse_special`. Tokens with the lstrip / rstrip attribute swallow the whitespace
// before / after them. Views point into `text`.
std::vector<Fragment> split_special(std::string_view text, const Vocab& vocab, bool parse_special);

}  // namespace hart::tok
