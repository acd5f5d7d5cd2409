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
  // the reply parser reads); other control tokens have none.
  TextOutput(const Tokenizer& tok, std::vector<std::string> stops, std::vector<int32_t> shown = {});

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
  size_t n_ids_ = 0;
  std::string text_;  // the decoded tokens (the pieces of all but the first concatenate)
  size_t sent_ = 0;   // bytes of text_ already released
  bool stopped_ = false;
  std::string stop_word_;
};

// Bytes of s that form complete UTF-8 characters (an unfinished last character excluded).
size_t complete_utf8_prefix(const std::string& s);

}  // namespace hart
