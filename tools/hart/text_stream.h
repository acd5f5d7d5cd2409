// Streaming detokenization for the CLI.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace hart::cli {

// Prints the text of a growing token sequence as it grows, holding back an incomplete
// UTF-8 sequence at the end until its remaining bytes arrive.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tok) : tok_(tok) {}
  void push(int32_t id) {
    ids_.push_back(id);
    const std::string text = tok_.decode(ids_);
    size_t end = complete_utf8_prefix(text);
    if (end > printed_) {
      std::fwrite(text.data() + printed_, 1, end - printed_, stdout);
      std::fflush(stdout);
      printed_ = end;
    }
  }
  std::string text() const { return tok_.decode(ids_); }
  void clear() { ids_.clear(), printed_ = 0; }

 private:
  static size_t complete_utf8_prefix(const std::string& s) {
    const size_t n = s.size();
    size_t i = n;
    while (i > 0 && n - i < 3 && (uint8_t(s[i - 1]) & 0xC0) == 0x80) i--;  // continuation bytes
    if (i == 0 || uint8_t(s[i - 1]) < 0xC0) return n;  // ends in a complete character
    const uint8_t lead = uint8_t(s[i - 1]);
    const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    return n - (i - 1) >= len ? n : i - 1;
  }
  const Tokenizer& tok_;
  std::vector<int32_t> ids_;
  size_t printed_ = 0;
};

}  // namespace hart::cli
