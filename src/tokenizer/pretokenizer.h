// The word splitter in front of byte-level BPE, chosen by `tokenizer.ggml.pre`.
//
// A pre-tokenizer is a list of regexes applied in turn, as llama.cpp does: each regex splits
// every piece the previous one produced into its matches and the unmatched text between them
// (kept as pieces of their own). Patterns are llama.cpp's per pre-tokenizer name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace hart::tok {

// What a pre-tokenizer family implies for the rest of the tokenizer.
struct PreTokenizerTraits {
  // Llama-3 style: a word that is a token as a whole is emitted without merging.
  bool ignore_merges = false;
  // The add-BOS default of the family, used when the file has no add_bos_token key.
  bool add_bos = false;
};

// `name` is the value of tokenizer.ggml.pre ("" means "default"). Throws hart::Error for
// a name we do not know.
PreTokenizerTraits pre_tokenizer_traits(std::string_view name);

class PreTokenizer {
 public:
  // Throws hart::Error for an unknown name, like pre_tokenizer_traits.
  explicit PreTokenizer(std::string_view name);

  // Splits valid UTF-8 `text` into words (views into `text`, in order, covering all of it).
  std::vector<std::string_view> split(std::string_view text) const;

  const PreTokenizerTraits& traits() const { return traits_; }

 private:
  std::vector<Regex> regexes_;
  PreTokenizerTraits traits_;
};

}  // namespace hart::tok
