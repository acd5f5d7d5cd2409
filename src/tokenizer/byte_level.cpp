#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace hart::tok {

namespace {

bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

constexpr char32_t kAlphabetEnd = 0x144;  // one past the highest code point used

struct Alphabet {
  std::array<std::string, 256> text;
  std::array<int, kAlphabetEnd> byte_of;
  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = printable(b) ? static_cast<char32_t>(b) : next++;
      append_utf8(text[b], cp);
      byte_of[cp] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::string& byte_to_symbol(uint8_t b) { return alphabet().text[b]; }

std::string bytes_to_symbols(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (char c : raw) out += byte_to_symbol(static_cast<uint8_t>(c));
  return out;
}

int symbol_to_byte(char32_t cp) { return cp < kAlphabetEnd ? alphabet().byte_of[cp] : -1; }

}  // namespace hart::tok
