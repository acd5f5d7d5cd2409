// The word splitter in front of BPE, chosen by `tokenizer.ggml.pre`.
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
  // BOS is added even when the file says add_bos_token = false (llama.cpp's workaround for Gemma 4
  // files converted that way).
  bool force_add_bos = false;
  // SentencePiece-style BPE (Gemma 4): spaces are written "▁" before splitting, words stay raw
  // UTF-8 instead of GPT-2's byte alphabet, unmergeable bytes fall back to <0xNN> tokens, and
  // decoding turns "▁" back into spaces.
  bool sentencepiece_style = false;
  // A word made of newlines only that is a token as a whole is emitted as that token, without
  // merging (llama.cpp's rule for Gemma 4, its PR 21343).
  bool whole_newline_runs = false;
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

 private:
  std::vector<Regex> regexes_;
};

}  // namespace hart::tok
