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
  TextOutput(const Tokenizer& tok, std::vector<std::string> stops);

  // Adds a generated token; returns the text that became final.
  std::string push(int32_t id);
  // At the end of generation: whatever was held back (unless a stop string ended the text).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  const Tokenizer& tok_;
  std::vector<std::string> stops_;
  std::vector<int32_t> ids_;
  std::string text_;  // decode(ids_)
  size_t sent_ = 0;   // bytes of text_ already released
  bool stopped_ = false;
};

// Bytes of s that form complete UTF-8 characters (an unfinished last character excluded).
size_t complete_utf8_prefix(const std::string& s);

}  // namespace hart
