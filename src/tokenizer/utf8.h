// UTF-8 helpers shared by the tokenizers: code point decoding/encoding and the repair of
// invalid input (each invalid byte becomes U+FFFD, as llama.cpp does before tokenizing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hart::tok {

// Bytes in the sequence started by `lead`, judged from its high bits alone (1 for a stray
// continuation byte), the way the SPM/BPE symbol splitters walk text.
inline size_t utf8_seq_len(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

void append_utf8(std::string& out, char32_t cp);

// Decodes the code point at `pos` of valid UTF-8 and advances `pos` past it.
char32_t next_code_point(std::string_view s, size_t& pos);

// Length of the well-formed UTF-8 sequence at s[pos] (RFC 3629: no overlongs, surrogates or
// code points above U+10FFFF), or 0 when the byte there does not start one.
size_t valid_utf8_len(std::string_view s, size_t pos);

// `s` with every byte that does not start a well-formed sequence replaced by U+FFFD.
std::string repair_utf8(std::string_view s);

// `s` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string_view s, std::string_view from, std::string_view to);

// SentencePiece's visible space U+2581 "▁".
inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

}  // namespace hart::tok
