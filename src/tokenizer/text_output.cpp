#include "tokenizer/text_output.h"

#include <algorithm>

namespace hart {

size_t complete_utf8_prefix(const std::string& s) {
  const size_t n = s.size();
  size_t i = n;
  while (i > 0 && n - i < 3 && (uint8_t(s[i - 1]) & 0xC0) == 0x80) i--;  // continuation bytes
  if (i == 0 || uint8_t(s[i - 1]) < 0xC0) return n;                      // ends in a complete character
  const uint8_t lead = uint8_t(s[i - 1]);
  const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  return n - (i - 1) >= len ? n : i - 1;
}

TextOutput::TextOutput(const Tokenizer& tok, std::vector<std::string> stops, std::vector<int32_t> shown, bool at_text_start)
    : tok_(tok), stops_(std::move(stops)), shown_(std::move(shown)), at_text_start_(at_text_start) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string TextOutput::push(int32_t id) {
  if (stopped_) return {};
  const bool shown = std::find(shown_.begin(), shown_.end(), id) != shown_.end();
  // decode() of one token: the text's first loses the space prefix the tokenizer adds.
  text_ += shown ? tok_.token_to_piece(id, true) : n_ids_ == 0 && at_text_start_ ? tok_.decode(std::span(&id, 1)) : tok_.token_to_piece(id);
  n_ids_++;
  const size_t complete = complete_utf8_prefix(text_);
  // A stop string may start in text already released only if it began in the held-back tail,
  // which is at most (longest stop - 1) bytes before sent_.
  size_t hold = 0, stop_at = std::string::npos;
  for (const std::string& stop : stops_) {
    const size_t from = sent_ >= stop.size() ? sent_ - stop.size() + 1 : 0;
    const size_t at = text_.find(stop, from);
    if (at != std::string::npos && at < complete && at < stop_at) {
      stop_at = at;
      stop_word_ = stop;
    }
    // The longest tail of the complete text that is a proper prefix of this stop string.
    for (size_t len = std::min(stop.size() - 1, complete - sent_); len > hold; len--)
      if (text_.compare(complete - len, len, stop, 0, len) == 0) {
        hold = len;
        break;
      }
  }
  size_t end = complete - hold;
  if (stop_at != std::string::npos) {
    stopped_ = true;
    end = stop_at;
  }
  std::string out = end > sent_ ? text_.substr(sent_, end - sent_) : std::string();
  sent_ = std::max(sent_, end);
  return out;
}

std::string TextOutput::flush() {
  if (stopped_ || sent_ >= text_.size()) return {};
  std::string out = text_.substr(sent_);
  sent_ = text_.size();
  return out;
}

}  // namespace hart
