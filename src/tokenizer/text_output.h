// The text of a growing generation, released piece by piece: an incomplete UTF-8 character at
// the end, and any tail that could be the start of a stop string, are held back until the next
// tokens decide them. A completed stop string ends the text just before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace hart {

class TextOutput {
 public:
  // `shown`: control tokens whose text is part of the output (a chat format's markers, which
  // the reply parser reads); other control tokens have none. A generation continues its prompt's
  // text, so every token's piece is kept whole, as llama.cpp prints them (SentencePiece's " Once"
  // keeps its space); `at_text_start` (a prompt of BOS alone) drops the space prefix the
  // tokenizer adds to a text's first word, as decoding the whole text does.
  TextOutput(const Tokenizer& tok, std::vector<std::string> stops, std::vector<int32_t> shown = {}, bool at_text_start = false);

  // Adds a generated token; returns the text that became final.
  std::string push(int32_t id);
  // At the end of generation: whatever was held back (unless a stop string ended the text).
  std::string flush();
  bool stopped() const { return stopped_; }
  // The stop string that ended the text (empty when none did).
  const std::string& stop_word() const { return stop_word_; }

 private:
  const Tokenizer& tok_;
  std::vector<std::string> stops_;
  std::vector<int32_t> shown_;
  bool at_text_start_;
  size_t n_ids_ = 0;
  std::string text_;  // the tokens' pieces
  size_t sent_ = 0;   // bytes of text_ already released
  bool stopped_ = false;
  std::string stop_word_;
};

// Bytes of s that form complete UTF-8 characters (an unfinished last character excluded).
size_t complete_utf8_prefix(const std::string& s);

}  // namespace hart
