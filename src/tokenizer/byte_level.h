// GPT-2's byte-level alphabet: every byte is shown as a printable code point (printable
// Latin-1 bytes as themselves, the other 68 bytes as U+0100..U+0143 in byte order), so BPE
// vocabularies can hold arbitrary bytes as text. "Ġ" (U+0120) is the space byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hart::tok {

// The UTF-8 text of byte `b`'s code point.
const std::string& byte_to_symbol(uint8_t b);

// Every byte of `raw` mapped through byte_to_symbol.
std::string bytes_to_symbols(std::string_view raw);

// The byte a code point stands for, or -1 when it is not part of the alphabet.
int symbol_to_byte(char32_t cp);

}  // namespace hart::tok
